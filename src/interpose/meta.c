/* SPDX-License-Identifier: Apache-2.0 */
/* Namespace calls the kernel serves. The library only keeps its caches
 * honest: a file it staged data for is relinked before it is renamed (so
 * whoever opens the new name sees the data), and a closed file it still
 * caches is dropped when unlinked or renamed over (so its space is freed). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fs/flush.h"
#include "../fs/inode.h"
#include "wrap.h"

/* The regular file at (dirfd, path) on the managed file system, if any. */
static bool lookup(int dirfd, const char *path, struct stat *st)
{
	return sfs_real.fstatat(dirfd, path, st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st->st_mode) && st->st_dev == sfs_g.root_dev;
}

static void relink_path(int dirfd, const char *path)
{
	struct stat st;
	if (sfs_inode_staged_count() == 0 || !lookup(dirfd, path, &st))
		return;
	struct sfs_inode *in = sfs_inode_find(st.st_dev, st.st_ino);
	if (in) {
		sfs_inode_flush(in, SFS_FLUSH_VISIBLE);
		sfs_inode_put(in);
	}
}

static int unlink_impl(int dirfd, const char *path, int flags, int (*kernel)(int, const char *, int))
{
	if (!sfs_active())
		return kernel(dirfd, path, flags);
	struct stat st;
	bool known = lookup(dirfd, path, &st);
	int r = kernel(dirfd, path, flags);
	if (r == 0 && known)
		sfs_inode_forget(st.st_dev, st.st_ino);
	return r;
}

static int k_unlinkat(int dirfd, const char *path, int flags)
{
	return sfs_real.unlinkat(dirfd, path, flags);
}

static int k_unlink(int dirfd, const char *path, int flags)
{
	(void)dirfd, (void)flags;
	return sfs_real.unlink(path);
}

static int k_remove(int dirfd, const char *path, int flags)
{
	(void)dirfd, (void)flags;
	return sfs_real.remove(path);
}

SFS_EXPORT int unlink(const char *path)
{
	return unlink_impl(AT_FDCWD, path, 0, k_unlink);
}

SFS_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	return unlink_impl(dirfd, path, flags, k_unlinkat);
}

/* glibc's remove() calls unlink internally, past any interposer. */
SFS_EXPORT int remove(const char *path)
{
	return unlink_impl(AT_FDCWD, path, 0, k_remove);
}

static int rename_impl(int olddir, const char *oldpath, int newdir, const char *newpath,
		       unsigned flags)
{
	if (!sfs_active())
		return sfs_real.renameat2(olddir, oldpath, newdir, newpath, flags);
	relink_path(olddir, oldpath);
	if (flags & RENAME_EXCHANGE)
		relink_path(newdir, newpath);
	struct stat st;
	bool replaced = !(flags & RENAME_EXCHANGE) && lookup(newdir, newpath, &st);
	int r = flags ? sfs_real.renameat2(olddir, oldpath, newdir, newpath, flags)
		      : sfs_real.renameat(olddir, oldpath, newdir, newpath);
	if (r == 0 && replaced)
		sfs_inode_forget(st.st_dev, st.st_ino);
	return r;
}

SFS_EXPORT int rename(const char *oldpath, const char *newpath)
{
	sfs_init();
	if (!sfs_g.active)
		return sfs_real.rename(oldpath, newpath);
	return rename_impl(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0);
}

SFS_EXPORT int renameat(int olddir, const char *oldpath, int newdir, const char *newpath)
{
	sfs_init();
	if (!sfs_g.active)
		return sfs_real.renameat(olddir, oldpath, newdir, newpath);
	return rename_impl(olddir, oldpath, newdir, newpath, 0);
}

SFS_EXPORT int renameat2(int olddir, const char *oldpath, int newdir, const char *newpath,
			 unsigned int flags)
{
	return rename_impl(olddir, oldpath, newdir, newpath, flags);
}
