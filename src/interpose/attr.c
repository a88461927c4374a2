/* SPDX-License-Identifier: Apache-2.0 */
/* Attribute changes (mode, owner). The kernel serves them; in sync and
 * strict modes the change is durable when the call returns
 * (fs/metasync.h). Timestamps are in meta.c. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wrap.h"

SFS_EXPORT int chmod(const char *path, mode_t mode)
{
	sfs_wake();
	int r = SFS_REAL(chmod)(path, mode);
	SFS_META_DURABLE(r, sfs_metasync_inode(AT_FDCWD, path, 0));
	return r;
}

SFS_EXPORT int lchmod(const char *path, mode_t mode)
{
	sfs_wake();
	int r = SFS_REAL(lchmod)(path, mode);
	SFS_META_DURABLE(r, sfs_metasync_inode(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW));
	return r;
}

SFS_EXPORT int fchmod(int fd, mode_t mode)
{
	SFS_HIDE_INTERNAL(fd, -1);
	sfs_init();
	int r = SFS_REAL(fchmod)(fd, mode);
	SFS_META_DURABLE(r, sfs_metasync_fd(fd));
	return r;
}

SFS_EXPORT int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
	sfs_wake();
	int r = SFS_REAL(fchmodat)(dirfd, path, mode, flags);
	SFS_META_DURABLE(r, sfs_metasync_inode(dirfd, path, flags));
	return r;
}

SFS_EXPORT int chown(const char *path, uid_t uid, gid_t gid)
{
	sfs_wake();
	int r = SFS_REAL(chown)(path, uid, gid);
	SFS_META_DURABLE(r, sfs_metasync_inode(AT_FDCWD, path, 0));
	return r;
}

SFS_EXPORT int lchown(const char *path, uid_t uid, gid_t gid)
{
	sfs_wake();
	int r = SFS_REAL(lchown)(path, uid, gid);
	SFS_META_DURABLE(r, sfs_metasync_inode(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW));
	return r;
}

SFS_EXPORT int fchown(int fd, uid_t uid, gid_t gid)
{
	SFS_HIDE_INTERNAL(fd, -1);
	sfs_init();
	int r = SFS_REAL(fchown)(fd, uid, gid);
	SFS_META_DURABLE(r, sfs_metasync_fd(fd));
	return r;
}

SFS_EXPORT int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flags)
{
	sfs_wake();
	int r = SFS_REAL(fchownat)(dirfd, path, uid, gid, flags);
	SFS_META_DURABLE(r, sfs_metasync_inode(dirfd, path, flags));
	return r;
}
