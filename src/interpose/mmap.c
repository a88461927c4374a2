/* SPDX-License-Identifier: Apache-2.0 */
/* mmap by the application of a managed file: the application's mapping
 * must see what the kernel file holds, and later appends must reach it the
 * way they would through the page cache. The file is relinked and left to
 * the kernel (demoted) before the real mmap. */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "../fs/process.h"
#include "wrap.h"

static void before_map(int fd, int flags)
{
	if (flags & MAP_ANONYMOUS)
		return;
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return;
	uint64_t t0 = sfs_stat_start();
	sfs_demote_inode(f->inode);
	sfs_file_put(f);
	sfs_stat_call_end(SFS_CALL_mmap, t0, 0, true);
}

SFS_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	sfs_init();
	if (!(flags & MAP_ANONYMOUS))
		SFS_HIDE_INTERNAL(fd, MAP_FAILED);
	before_map(fd, flags);
	return sfs_real.mmap(addr, len, prot, flags, fd, off);
}

SFS_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	sfs_init();
	if (!(flags & MAP_ANONYMOUS))
		SFS_HIDE_INTERNAL(fd, MAP_FAILED);
	before_map(fd, flags);
	return sfs_real.mmap64(addr, len, prot, flags, fd, off);
}
