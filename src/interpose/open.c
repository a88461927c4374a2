/* SPDX-License-Identifier: Apache-2.0 */
/* open(2) and friends, mkstemp and friends: the kernel opens, then the
 * library decides whether to manage the descriptor (a regular file on the
 * managed file system). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>

#include "../fs/metasync.h"
#include "../fs/process.h"
#include "fdlist.h"
#include "wrap.h"

/* glibc's __OPEN_NEEDS_MODE: the mode argument exists for O_CREAT and for
 * O_TMPFILE (reading it otherwise reads garbage). */
#define NEEDS_MODE(flags) (((flags)&O_CREAT) || ((flags)&O_TMPFILE) == O_TMPFILE)

#define GET_MODE(flags)                                                                            \
	mode_t mode = 0;                                                                           \
	if (NEEDS_MODE(flags)) {                                                                   \
		va_list ap;                                                                        \
		va_start(ap, flags);                                                               \
		mode = va_arg(ap, mode_t);                                                         \
		va_end(ap);                                                                        \
	}

/* Returns whether the open will create the file, when that must be made
 * durable (sync and strict modes). */
static bool before(int dirfd, const char *path, int flags)
{
	sfs_wake();
	return sfs_metasync_on() && sfs_metasync_will_create(dirfd, path, flags);
}

static int opened_at(int fd, int flags, int dirfd, const char *path, bool creating)
{
	sfs_manage(fd, flags);
	sfs_fdlist_opened(fd, path);
	if (fd >= 0 && sfs_unlikely(sfs_metasync_on())) {
		int rc = sfs_metasync_open(fd, flags, dirfd, path, creating);
		if (rc < 0) { /* as an O_SYNC open would: the caller learns of it */
			close(fd);
			errno = -rc;
			return -1;
		}
	}
	return fd;
}

SFS_EXPORT int open(const char *path, int flags, ...)
{
	GET_MODE(flags);
	bool creating = before(AT_FDCWD, path, flags);
	int fd = SFS_FD_RETRY(int, -1, SFS_REAL(open)(path, flags, mode));
	return opened_at(fd, flags, AT_FDCWD, path, creating);
}

SFS_ALIAS(open64, open);

SFS_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	GET_MODE(flags);
	bool creating = before(dirfd, path, flags);
	int fd = SFS_FD_RETRY(int, -1, SFS_REAL(openat)(dirfd, path, flags, mode));
	return opened_at(fd, flags, dirfd, path, creating);
}

SFS_ALIAS(openat64, openat);

/* _FORTIFY_SOURCE turns open(p, f) without a mode into these (glibc does
 * not declare them in a public header). */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

SFS_EXPORT int __open_2(const char *path, int flags)
{
	bool creating = before(AT_FDCWD, path, flags);
	int fd = SFS_FD_RETRY(int, -1, SFS_REAL(__open_2)(path, flags));
	return opened_at(fd, flags, AT_FDCWD, path, creating);
}

SFS_ALIAS(__open64_2, __open_2);

SFS_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	bool creating = before(dirfd, path, flags);
	int fd = SFS_FD_RETRY(int, -1, SFS_REAL(__openat_2)(dirfd, path, flags));
	return opened_at(fd, flags, dirfd, path, creating);
}

SFS_ALIAS(__openat64_2, __openat_2);

SFS_EXPORT int creat(const char *path, mode_t mode)
{
	bool creating = before(AT_FDCWD, path, O_CREAT | O_TRUNC);
	int fd = SFS_FD_RETRY(int, -1, SFS_REAL(creat)(path, mode));
	return opened_at(fd, O_CREAT | O_WRONLY | O_TRUNC, AT_FDCWD, path, creating);
}

SFS_ALIAS(creat64, creat);

/* mkstemp and friends create and open through glibc's internal open: the
 * new descriptor is handed to the library here, and in sync and strict
 * modes the new name is made durable. */
static int made_temp(int fd, int flags, const char *tmpl)
{
	if (fd < 0)
		return fd;
	return opened_at(fd, O_RDWR | O_CREAT | O_EXCL | flags, AT_FDCWD, tmpl, true);
}

SFS_EXPORT int mkstemp(char *tmpl)
{
	sfs_wake();
	return made_temp(SFS_REAL(mkstemp)(tmpl), 0, tmpl);
}

SFS_ALIAS(mkstemp64, mkstemp);

SFS_EXPORT int mkostemp(char *tmpl, int flags)
{
	sfs_wake();
	return made_temp(SFS_REAL(mkostemp)(tmpl, flags), flags, tmpl);
}

SFS_ALIAS(mkostemp64, mkostemp);

SFS_EXPORT int mkstemps(char *tmpl, int suffixlen)
{
	sfs_wake();
	return made_temp(SFS_REAL(mkstemps)(tmpl, suffixlen), 0, tmpl);
}

SFS_ALIAS(mkstemps64, mkstemps);

SFS_EXPORT int mkostemps(char *tmpl, int suffixlen, int flags)
{
	sfs_wake();
	return made_temp(SFS_REAL(mkostemps)(tmpl, suffixlen, flags), flags, tmpl);
}

SFS_ALIAS(mkostemps64, mkostemps);
