/* SPDX-License-Identifier: Apache-2.0 */
/* Namespace calls the kernel serves. The library keeps its caches honest:
 * a file it staged data for is relinked before it is renamed (so whoever
 * opens the new name sees the data), and a closed file it still caches is
 * dropped when unlinked or renamed over (so its space is freed). In sync
 * and strict modes the change is durable on return (fs/metasync.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <utime.h>
#include <unistd.h>

#include "../fs/flush.h"
#include "../fs/inode.h"
#include "../fs/logsync.h"
#include "../sys/statq.h"
#include "wrap.h"

/* The regular file at (dirfd, path) on the managed file system, if any
 * (the name itself, not what a symlink there points to). */
static bool lookup_at(int dirfd, const char *path, int flags, struct stat *st)
{
	return sfs_stat_quiet(dirfd, path, flags, st) == 0 && S_ISREG(st->st_mode) &&
	       st->st_dev == sfs_g.root_dev;
}

static bool lookup(int dirfd, const char *path, struct stat *st)
{
	return lookup_at(dirfd, path, AT_SYMLINK_NOFOLLOW, st);
}

/* Before its times are set (times: a utimes call): the file's staged data
 * in the kernel's file, and its next sync the kernel's (logsync.h). */
static void relink_inode(struct sfs_inode *in, bool times)
{
	sfs_inode_flush(in, SFS_FLUSH_VISIBLE);
	if (times)
		sfs_logsync_changed(in);
}

/* Relinks the staged data of the file at (dirfd, path), if this process
 * has any (relink_inode); with times, also if it has a file on the log's
 * path, whose next sync must then be the kernel's. */
static void relink_path_at(int dirfd, const char *path, int flags, bool times)
{
	struct stat st;
	if ((sfs_inode_staged_count() == 0 &&
	     !(times && atomic_load_explicit(&sfs_logsync_files, memory_order_relaxed))) ||
	    !path || !lookup_at(dirfd, path, flags, &st))
		return;
	struct sfs_inode *in = sfs_inode_find(st.st_dev, st.st_ino);
	if (in) {
		relink_inode(in, times);
		sfs_inode_put(in);
	}
}

static void relink_path(int dirfd, const char *path)
{
	relink_path_at(dirfd, path, AT_SYMLINK_NOFOLLOW, false);
}

static int unlink_impl(int dirfd, const char *path, int flags,
		       int (*kernel)(int, const char *, int))
{
	if (!sfs_active_path())
		return kernel(dirfd, path, flags);
	struct stat st;
	bool known = sfs_inode_any() && lookup(dirfd, path, &st);
	int r = kernel(dirfd, path, flags);
	if (r == 0 && known)
		sfs_inode_forget(st.st_dev, st.st_ino);
	SFS_META_DURABLE(r, sfs_metasync_parent(dirfd, path));
	return r;
}

static int k_unlinkat(int dirfd, const char *path, int flags)
{
	return SFS_REAL(unlinkat)(dirfd, path, flags);
}

static int k_unlink(int dirfd, const char *path, int flags)
{
	(void)dirfd, (void)flags;
	return SFS_REAL(unlink)(path);
}

static int k_remove(int dirfd, const char *path, int flags)
{
	(void)dirfd, (void)flags;
	return SFS_REAL(remove)(path);
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
	if (!sfs_active_path())
		return SFS_REAL(renameat2)(olddir, oldpath, newdir, newpath, flags);
	relink_path(olddir, oldpath);
	if (flags & RENAME_EXCHANGE)
		relink_path(newdir, newpath);
	struct stat st;
	bool replaced =
		!(flags & RENAME_EXCHANGE) && sfs_inode_any() && lookup(newdir, newpath, &st);
	int r = flags ? SFS_REAL(renameat2)(olddir, oldpath, newdir, newpath, flags) :
			SFS_REAL(renameat)(olddir, oldpath, newdir, newpath);
	if (r == 0 && replaced)
		sfs_inode_forget(st.st_dev, st.st_ino);
	/* Both directories, the source's first (the name leaves it). */
	SFS_META_DURABLE(r, sfs_metasync_parent(olddir, oldpath));
	SFS_META_DURABLE(r, sfs_metasync_parent(newdir, newpath));
	return r;
}

SFS_EXPORT int rename(const char *oldpath, const char *newpath)
{
	if (!sfs_active_path())
		return SFS_REAL(rename)(oldpath, newpath);
	return rename_impl(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0);
}

SFS_EXPORT int renameat(int olddir, const char *oldpath, int newdir, const char *newpath)
{
	if (!sfs_active_path())
		return SFS_REAL(renameat)(olddir, oldpath, newdir, newpath);
	return rename_impl(olddir, oldpath, newdir, newpath, 0);
}

SFS_EXPORT int renameat2(int olddir, const char *oldpath, int newdir, const char *newpath,
			 unsigned int flags)
{
	return rename_impl(olddir, oldpath, newdir, newpath, flags);
}

/* Timestamps: set them on the kernel file after its data is complete, or the
 * relink at close (a write to the file) would move mtime to "now" again
 * (tar, cp -p, rsync set times on files they just wrote). */
static void relink_fd(int fd)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (f) {
		relink_inode(f->inode, true);
		sfs_wrap_put(f);
	}
}

SFS_EXPORT int futimens(int fd, const struct timespec times[2])
{
	SFS_HIDE_INTERNAL(fd, -1);
	relink_fd(fd);
	int r = SFS_REAL(futimens)(fd, times);
	SFS_META_DURABLE(r, sfs_metasync_fd(fd));
	return r;
}

SFS_EXPORT int futimes(int fd, const struct timeval tv[2])
{
	SFS_HIDE_INTERNAL(fd, -1);
	relink_fd(fd);
	int r = SFS_REAL(futimes)(fd, tv);
	SFS_META_DURABLE(r, sfs_metasync_fd(fd));
	return r;
}

SFS_EXPORT int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
	/* glibc declares path nonnull, but the kernel takes NULL to mean
	 * futimens(dirfd): hide the pointer from that assumption. */
	const char *p = path;
	__asm__("" : "+r"(p));
	if (p ? sfs_active_path() : sfs_active()) {
		if (p)
			relink_path_at(dirfd, p, flags & AT_SYMLINK_NOFOLLOW, true);
		else
			relink_fd(dirfd);
	}
	int r = SFS_REAL(utimensat)(dirfd, path, times, flags);
	SFS_META_DURABLE(r, p ? sfs_metasync_inode(dirfd, p, flags) : sfs_metasync_fd(dirfd));
	return r;
}

SFS_EXPORT int futimesat(int dirfd, const char *path, const struct timeval tv[2])
{
	if (sfs_active_path())
		relink_path_at(dirfd, path, 0, true);
	int r = SFS_REAL(futimesat)(dirfd, path, tv);
	SFS_META_DURABLE(r, sfs_metasync_inode(dirfd, path, 0));
	return r;
}

SFS_EXPORT int utimes(const char *path, const struct timeval tv[2])
{
	if (sfs_active_path())
		relink_path_at(AT_FDCWD, path, 0, true);
	int r = SFS_REAL(utimes)(path, tv);
	SFS_META_DURABLE(r, sfs_metasync_inode(AT_FDCWD, path, 0));
	return r;
}

SFS_EXPORT int lutimes(const char *path, const struct timeval tv[2])
{
	if (sfs_active_path())
		relink_path_at(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, true);
	int r = SFS_REAL(lutimes)(path, tv);
	SFS_META_DURABLE(r, sfs_metasync_inode(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW));
	return r;
}

SFS_EXPORT int utime(const char *path, const struct utimbuf *times)
{
	if (sfs_active_path())
		relink_path_at(AT_FDCWD, path, 0, true);
	int r = SFS_REAL(utime)(path, times);
	SFS_META_DURABLE(r, sfs_metasync_inode(AT_FDCWD, path, 0));
	return r;
}
