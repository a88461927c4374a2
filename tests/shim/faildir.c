/* SPDX-License-Identifier: Apache-2.0 */
/* A directory reader that fails once, as the fault injectors programs'
 * own tests preload (coreutils' rm-readdir-fail): preloaded after
 * libsplitfs (LD_PRELOAD=libsplitfs.so:faildir.so), the first readdir
 * and the first getdents64 it sees fail with EIO; later calls pass. It is
 * meant for the program's calls: the library's own listings (of /proc,
 * of its private folder) must not reach it (tests/c/later_preload.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

struct dirent *readdir(DIR *d)
{
	static atomic_int calls;
	if (atomic_fetch_add(&calls, 1) == 0) {
		errno = EIO;
		return NULL;
	}
	struct dirent *(*next)(DIR *) = (struct dirent * (*)(DIR *)) dlsym(RTLD_NEXT, "readdir");
	return next(d);
}

ssize_t getdents64(int fd, void *buf, size_t len)
{
	static atomic_int calls;
	if (atomic_fetch_add(&calls, 1) == 0) {
		errno = EIO;
		return -1;
	}
	ssize_t (*next)(int, void *, size_t) =
		(ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "getdents64");
	return next(fd, buf, len);
}
