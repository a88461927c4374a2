/* SPDX-License-Identifier: Apache-2.0 */
/* POSIX mode on DAX (inode.h: dax, fsynced, kdirty): which inodes flush
 * their own stores, and the primitives they flush with. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>

#include "../init.h"
#include "../interpose/real.h"
#include "../util/pmem.h"
#include "inode.h"

_Atomic uint64_t sfs_meta_epoch;

void sfs_inode_dax_setup(struct sfs_inode *in)
{
	in->dax = in->writable && sfs_g.opt.mode == SFS_MODE_POSIX && sfs_pmem_file_is_dax(in->kfd);
	atomic_store(&in->maps.sync, in->dax);
}

bool sfs_inode_dax_flushes(struct sfs_inode *in)
{
	if (!in->dax || !atomic_load_explicit(&in->maps.sync, memory_order_relaxed) ||
	    !atomic_load_explicit(&in->fsynced, memory_order_relaxed))
		return false;
	if (sfs_pmem_ready())
		return true;
	if (atomic_load(&in->ksize) < 4096)
		return false; /* a longer file will teach the primitives */
	/* kfd is hidden from the wrappers libpmem2 calls: a fresh descriptor. */
	char path[40];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", in->kfd);
	int fd = sfs_real.open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
	bool ok = fd >= 0 && sfs_pmem_learn(fd);
	if (fd >= 0)
		sfs_real.close(fd);
	if (!ok) /* this file's stores are left to the kernel's fsync */
		atomic_store(&in->maps.sync, false);
	return ok;
}
