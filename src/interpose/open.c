/* SPDX-License-Identifier: Apache-2.0 */
/* open(2) and friends: the kernel opens, then the library decides whether to
 * manage the descriptor (a regular file on the managed file system). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>

#include "wrap.h"

/* glibc's __OPEN_NEEDS_MODE: the mode argument exists for O_CREAT and for
 * O_TMPFILE (reading it otherwise reads garbage). */
#define NEEDS_MODE(flags) (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE)

#define GET_MODE(flags)                                                                            \
	mode_t mode = 0;                                                                           \
	if (NEEDS_MODE(flags)) {                                                                   \
		va_list ap;                                                                        \
		va_start(ap, flags);                                                               \
		mode = va_arg(ap, mode_t);                                                         \
		va_end(ap);                                                                        \
	}

static void before(int dirfd, const char *path, int flags)
{
	sfs_init();
	sfs_prepare_truncate(dirfd, path, flags);
}

static int opened(int fd, int flags)
{
	sfs_manage(fd, flags);
	return fd;
}

SFS_EXPORT int open(const char *path, int flags, ...)
{
	GET_MODE(flags);
	before(AT_FDCWD, path, flags);
	return opened(sfs_real.open(path, flags, mode), flags);
}

SFS_EXPORT int open64(const char *path, int flags, ...)
{
	GET_MODE(flags);
	before(AT_FDCWD, path, flags);
	return opened(sfs_real.open64(path, flags, mode), flags);
}

SFS_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	GET_MODE(flags);
	before(dirfd, path, flags);
	return opened(sfs_real.openat(dirfd, path, flags, mode), flags);
}

SFS_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	GET_MODE(flags);
	before(dirfd, path, flags);
	return opened(sfs_real.openat64(dirfd, path, flags, mode), flags);
}

/* _FORTIFY_SOURCE turns open(p, f) without a mode into these (glibc does
 * not declare them in a public header). */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

SFS_EXPORT int __open_2(const char *path, int flags)
{
	before(AT_FDCWD, path, flags);
	return opened(sfs_real.__open_2(path, flags), flags);
}

SFS_EXPORT int __open64_2(const char *path, int flags)
{
	before(AT_FDCWD, path, flags);
	return opened(sfs_real.__open64_2(path, flags), flags);
}

SFS_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	before(dirfd, path, flags);
	return opened(sfs_real.__openat_2(dirfd, path, flags), flags);
}

SFS_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	before(dirfd, path, flags);
	return opened(sfs_real.__openat64_2(dirfd, path, flags), flags);
}

SFS_EXPORT int creat(const char *path, mode_t mode)
{
	before(AT_FDCWD, path, O_TRUNC);
	return opened(sfs_real.creat(path, mode), O_CREAT | O_WRONLY | O_TRUNC);
}

SFS_EXPORT int creat64(const char *path, mode_t mode)
{
	before(AT_FDCWD, path, O_TRUNC);
	return opened(sfs_real.creat64(path, mode), O_CREAT | O_WRONLY | O_TRUNC);
}
