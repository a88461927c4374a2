/* SPDX-License-Identifier: Apache-2.0 */
/* A file whose writeback fails, for the crash suite's "logfail" test:
 * preloaded after libsplitfs (LD_PRELOAD=libsplitfs.so:syncfail.so), it is
 * the "real" fsync and fdatasync the library calls. On a file whose last
 * component is $SFS_SHIM_FAIL_NAME they fail with EIO and sync nothing, as
 * the kernel's do when the file's writeback met a bad disk: what the page
 * cache holds of it is not durable. Every other file syncs as it would. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool failing(int fd)
{
	const char *want = getenv("SFS_SHIM_FAIL_NAME");
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = want && *want ? readlink(link, path, sizeof(path) - 1) : -1;
	if (n <= 0)
		return false;
	path[n] = '\0';
	const char *slash = strrchr(path, '/');
	return strcmp(slash ? slash + 1 : path, want) == 0;
}

int fsync(int fd)
{
	if (failing(fd)) {
		errno = EIO;
		return -1;
	}
	return ((int (*)(int))dlsym(RTLD_NEXT, "fsync"))(fd);
}

int fdatasync(int fd)
{
	if (failing(fd)) {
		errno = EIO;
		return -1;
	}
	return ((int (*)(int))dlsym(RTLD_NEXT, "fdatasync"))(fd);
}
