/* SPDX-License-Identifier: Apache-2.0 */
/* Durability: fsync and fdatasync relink atomically, then sync. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "../fs/flush.h"
#include "wrap.h"

SFS_EXPORT int fsync(int fd)
{
	SFS_HIDE_INTERNAL(fd, -1);
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f) {
		if (sfs_unlikely(sfs_fd_any_pending()) && sfs_fd_kind(fd) == SFS_FD_KIND_PENDING)
			sfs_fd_pending_synced(fd);
		return SFS_REAL(fsync)(fd);
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_fsync);
	return (int)sfs_wrap_done(f, SFS_CALL_fsync, t0, sfs_inode_sync(f->inode, fd, false));
}

SFS_EXPORT int fdatasync(int fd)
{
	SFS_HIDE_INTERNAL(fd, -1);
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f) {
		if (sfs_unlikely(sfs_fd_any_pending()) && sfs_fd_kind(fd) == SFS_FD_KIND_PENDING)
			sfs_fd_pending_synced(fd);
		return SFS_REAL(fdatasync)(fd);
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_fdatasync);
	return (int)sfs_wrap_done(f, SFS_CALL_fdatasync, t0, sfs_inode_sync(f->inode, fd, true));
}

SFS_EXPORT int sync_file_range(int fd, off_t off, off_t n, unsigned int flags)
{
	SFS_HIDE_INTERNAL(fd, -1);
	struct sfs_kview kv;
	sfs_init();
	sfs_kview_begin(&kv, fd, false);
	int r = SFS_REAL(sync_file_range)(fd, off, n, flags);
	sfs_kview_end(&kv);
	return r;
}

SFS_EXPORT int syncfs(int fd)
{
	if (sfs_active())
		sfs_flush_all();
	return SFS_REAL(syncfs)(fd);
}

SFS_EXPORT void sync(void)
{
	if (sfs_active())
		sfs_flush_all();
	SFS_REAL(sync)();
}
