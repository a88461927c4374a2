/* SPDX-License-Identifier: Apache-2.0 */
/* Names the kernel makes and removes (directories, links, device nodes,
 * FIFOs). Nothing here touches file data; in sync and strict modes the new
 * or removed name is durable when the call returns (fs/metasync.h).
 * unlink, rename and the open family live in meta.c and open.c. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wrap.h"

/* mkdir(p) is mkdirat(AT_FDCWD, p) in the kernel (one system call,
 * the same checks and errors), and so are mkfifo and mknod below. */
SFS_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	sfs_wake();
	int r = SFS_REAL(mkdirat)(dirfd, path, mode);
	SFS_META_DURABLE(r, sfs_metasync_parent(dirfd, path));
	return r;
}

SFS_EXPORT int mkdir(const char *path, mode_t mode)
{
	return mkdirat(AT_FDCWD, path, mode);
}

SFS_EXPORT int rmdir(const char *path)
{
	sfs_wake();
	int r = SFS_REAL(rmdir)(path);
	SFS_META_DURABLE(r, sfs_metasync_parent(AT_FDCWD, path));
	return r;
}

SFS_EXPORT int link(const char *oldpath, const char *newpath)
{
	sfs_wake();
	int r = SFS_REAL(link)(oldpath, newpath);
	SFS_META_DURABLE(r, sfs_metasync_parent(AT_FDCWD, newpath));
	return r;
}

SFS_EXPORT int linkat(int olddir, const char *oldpath, int newdir, const char *newpath, int flags)
{
	sfs_wake();
	int r = SFS_REAL(linkat)(olddir, oldpath, newdir, newpath, flags);
	SFS_META_DURABLE(r, sfs_metasync_parent(newdir, newpath));
	return r;
}

SFS_EXPORT int symlink(const char *target, const char *linkpath)
{
	sfs_wake();
	int r = SFS_REAL(symlink)(target, linkpath);
	SFS_META_DURABLE(r, sfs_metasync_parent(AT_FDCWD, linkpath));
	return r;
}

SFS_EXPORT int symlinkat(const char *target, int dirfd, const char *linkpath)
{
	sfs_wake();
	int r = SFS_REAL(symlinkat)(target, dirfd, linkpath);
	SFS_META_DURABLE(r, sfs_metasync_parent(dirfd, linkpath));
	return r;
}

static int mknodat_impl(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	sfs_wake();
	int r = SFS_REAL(mknodat)(dirfd, path, mode, dev);
	SFS_META_DURABLE(r, sfs_metasync_parent(dirfd, path));
	return r;
}

SFS_EXPORT int mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	return mknodat_impl(dirfd, path, mode, dev);
}

SFS_EXPORT int mknod(const char *path, mode_t mode, dev_t dev)
{
	return mknodat_impl(AT_FDCWD, path, mode, dev);
}

/* mknod and mknodat of a program built against glibc before 2.33 (see
 * __xstat, stat.c): version 0 (_MKNOD_VER), or EINVAL. */
int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev);
int __xmknodat(int ver, int dirfd, const char *path, mode_t mode, dev_t *dev);

static int xmknodat_impl(int ver, int dirfd, const char *path, mode_t mode, dev_t *dev)
{
	if (ver != 0) {
		errno = EINVAL;
		return -1;
	}
	return mknodat_impl(dirfd, path, mode, *dev);
}

SFS_EXPORT int __xmknodat(int ver, int dirfd, const char *path, mode_t mode, dev_t *dev)
{
	return xmknodat_impl(ver, dirfd, path, mode, dev);
}

SFS_EXPORT int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev)
{
	return xmknodat_impl(ver, AT_FDCWD, path, mode, dev);
}

/* glibc's mkfifo calls mknod internally, past any interposer. */
SFS_EXPORT int mkfifoat(int dirfd, const char *path, mode_t mode)
{
	sfs_wake();
	int r = SFS_REAL(mkfifoat)(dirfd, path, mode);
	SFS_META_DURABLE(r, sfs_metasync_parent(dirfd, path));
	return r;
}

SFS_EXPORT int mkfifo(const char *path, mode_t mode)
{
	return mkfifoat(AT_FDCWD, path, mode);
}
