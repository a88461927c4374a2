/* SPDX-License-Identifier: Apache-2.0 */
/* mmap by the application of a managed file: the application's mapping
 * must see what the kernel file holds, and later appends must reach it the
 * way they would through the page cache. The file is relinked and left to
 * the kernel (demoted) before the real mmap. */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "../fs/process.h"
#include "wrap.h"

static void before_map(int fd)
{
	if (!sfs_active())
		return;
	sfs_fd_pending_forget(fd); /* the kernel's, as a demoted file is */
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return;
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_mmap);
	sfs_demote_inode(f->inode);
	sfs_wrap_put(f);
	sfs_stat_call_end(SFS_CALL_mmap, t0, 0, true);
}

/* Memory allocators (jemalloc) call mmap while holding their own locks, so
 * mmap never starts the library (sfs_initialized). */
SFS_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *early;
	if (!sfs_initialized()) {
		void *(*fn)(void *, size_t, int, int, int, off_t) = sfs_early_next("mmap", &early);
		return fn(addr, len, prot, flags, fd, off);
	}
	if (!(flags & MAP_ANONYMOUS)) {
		SFS_HIDE_INTERNAL(fd, MAP_FAILED);
		before_map(fd);
	}
	return SFS_REAL(mmap)(addr, len, prot, flags, fd, off);
}

SFS_ALIAS(mmap64, mmap);
