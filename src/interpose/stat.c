/* SPDX-License-Identifier: Apache-2.0 */
/* stat family: the kernel answers, then the library corrects the size of a
 * file whose appends are still staged (fsx checks it after every call). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "../fs/inode.h"
#include "../fs/lease.h"
#include "wrap.h"

/* The logical size and last write time of (dev, ino) if it has staged
 * bytes; false otherwise. */
static bool staged(dev_t dev, ino_t ino, int64_t *size, int64_t *mtime_ns)
{
	if (sfs_inode_staged_count() == 0 || dev != sfs_g.root_dev)
		return false;
	struct sfs_inode *in = sfs_inode_find(dev, ino);
	if (!in)
		return false;
	bool yes = sfs_inode_leased(in) && atomic_load(&in->staged);
	*size = atomic_load(&in->size);
	*mtime_ns = atomic_load(&in->staged_mtime);
	sfs_inode_put(in);
	return yes;
}

/* A newer time than ts (mtime and ctime move forward only). */
static void later(struct timespec *ts, int64_t ns)
{
	if ((int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec < ns) {
		ts->tv_sec = ns / 1000000000;
		ts->tv_nsec = ns % 1000000000;
	}
}

static void patch(int r, struct stat *st)
{
	int64_t size, mtime;
	if (r != 0 || !sfs_live() || !S_ISREG(st->st_mode) ||
	    !staged(st->st_dev, st->st_ino, &size, &mtime))
		return;
	if (size > st->st_size)
		st->st_blocks += (size - st->st_size + 511) / 512;
	st->st_size = size;
	later(&st->st_mtim, mtime);
	later(&st->st_ctim, mtime);
}

static void later_x(struct statx_timestamp *ts, int64_t ns)
{
	if (ts->tv_sec * 1000000000 + ts->tv_nsec < ns) {
		ts->tv_sec = ns / 1000000000;
		ts->tv_nsec = (uint32_t)(ns % 1000000000);
	}
}

static void patch_statx(int r, struct statx *stx)
{
	int64_t size, mtime;
	if (r != 0 || !sfs_live() || !S_ISREG(stx->stx_mode) ||
	    !staged(makedev(stx->stx_dev_major, stx->stx_dev_minor), stx->stx_ino, &size, &mtime))
		return;
	if (stx->stx_mask & STATX_SIZE) {
		if ((uint64_t)size > stx->stx_size && (stx->stx_mask & STATX_BLOCKS))
			stx->stx_blocks += ((uint64_t)size - stx->stx_size + 511) / 512;
		stx->stx_size = (uint64_t)size;
	}
	if (stx->stx_mask & STATX_MTIME)
		later_x(&stx->stx_mtime, mtime);
	if (stx->stx_mask & STATX_CTIME)
		later_x(&stx->stx_ctime, mtime);
}

/* struct stat64 and struct stat are the same on x86-64. */
static_assert(sizeof(struct stat64) == sizeof(struct stat), "stat64 layout");

static int fstat_impl(int fd, struct stat *st)
{
	sfs_init();
	SFS_HIDE_INTERNAL(fd, -1);
	int r = SFS_REAL(fstat)(fd, st);
	patch(r, st);
	return r;
}

/* A file this process wrote and then closed keeps the library's writable
 * descriptor until the background thread lets it go (inode.c), and XFS
 * frees the blocks it allocated ahead past a file's end only when the
 * file's last writable descriptor closes: until then st_blocks counts
 * them, though the application's close would have freed them under the
 * kernel (Python's test_tarfile finds a sparse file it extracted not
 * sparse). So a stat by name lets such files go first: one load when
 * there are none. */
static void settle_closed_writers(void)
{
	if (sfs_live())
		sfs_inode_evict_writable();
}

/* A call that names a path starts the library on its root (init.h); an
 * empty one with AT_EMPTY_PATH is an fstat of dirfd. */
static void before_path(const char *path, int flags)
{
	if ((flags & AT_EMPTY_PATH) && path && !*path) {
		sfs_init();
		return;
	}
	sfs_wake();
	settle_closed_writers();
}

static int fstatat_impl(int dirfd, const char *path, struct stat *st, int flags)
{
	before_path(path, flags);
	int r = SFS_REAL(fstatat)(dirfd, path, st, flags);
	patch(r, st);
	return r;
}

SFS_EXPORT int fstat(int fd, struct stat *st)
{
	return fstat_impl(fd, st);
}

SFS_ALIAS(fstat64, fstat);

SFS_EXPORT int stat(const char *path, struct stat *st)
{
	before_path(path, 0);
	int r = SFS_REAL(stat)(path, st);
	patch(r, st);
	return r;
}

SFS_ALIAS(stat64, stat);

SFS_EXPORT int lstat(const char *path, struct stat *st)
{
	before_path(path, 0);
	int r = SFS_REAL(lstat)(path, st);
	patch(r, st);
	return r;
}

SFS_ALIAS(lstat64, lstat);

SFS_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return fstatat_impl(dirfd, path, st, flags);
}

SFS_ALIAS(fstatat64, fstatat);

/* What a program built against glibc before 2.33 calls for stat, lstat,
 * fstat and fstatat (they were inline wrappers of these then; glibc still
 * exports them for such binaries: manylinux wheels, older distributions'
 * builds). On x86-64 both versions glibc takes, the kernel's (0) and
 * Linux's (1), have struct stat's layout; another is EINVAL, as in glibc. */
#define STAT_VER_OK(ver) ((ver) == 0 || (ver) == 1)

int __fxstat(int ver, int fd, struct stat *st);
int __xstat(int ver, const char *path, struct stat *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);

SFS_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
	if (!STAT_VER_OK(ver)) {
		errno = EINVAL;
		return -1;
	}
	return fstat_impl(fd, st);
}

SFS_ALIAS(__fxstat64, __fxstat);

SFS_EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
	if (!STAT_VER_OK(ver)) {
		errno = EINVAL;
		return -1;
	}
	return fstatat_impl(AT_FDCWD, path, st, 0);
}

SFS_ALIAS(__xstat64, __xstat);

SFS_EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	if (!STAT_VER_OK(ver)) {
		errno = EINVAL;
		return -1;
	}
	return fstatat_impl(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

SFS_ALIAS(__lxstat64, __lxstat);

SFS_EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	if (!STAT_VER_OK(ver)) {
		errno = EINVAL;
		return -1;
	}
	return fstatat_impl(dirfd, path, st, flags);
}

SFS_ALIAS(__fxstatat64, __fxstatat);

SFS_EXPORT int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	before_path(path, flags);
	int r = SFS_REAL(statx)(dirfd, path, flags, mask, stx);
	patch_statx(r, stx);
	return r;
}
