/* SPDX-License-Identifier: Apache-2.0 */
/* POSIX mode on DAX (inode.h: dax, fsynced, kdirty): which inodes flush
 * their own stores, and the primitives they flush with. */
#define _GNU_SOURCE

#include "dax.h"

#include "../sys/global.h"
#include "../sys/real.h"
#include "../oplog/oplog.h"
#include "../staging/pool.h"
#include "../util/pmem.h"
#include "../util/stats.h"
#include "inode.h"

SFS_HOT _Atomic uint64_t sfs_meta_epoch;

bool sfs_inode_meta_synced(const struct sfs_inode *in)
{
	return atomic_load(&in->synced_meta) == atomic_load(&sfs_meta_epoch);
}

bool sfs_inode_on_dax(const struct sfs_inode *in)
{
	return in->dax || sfs_oplog_dax();
}

void sfs_inode_dax_setup(struct sfs_inode *in)
{
	bool dax =
		in->writable && sfs_g.opt.mode == SFS_MODE_POSIX && sfs_pmem_file_is_dax(in->kfd);
	atomic_store(&in->dax, dax);
	atomic_store(&in->maps.sync, dax);
}

void sfs_inode_dax_learn(struct sfs_inode *in)
{
	if (in->dax && sfs_pmem_learn_claim())
		sfs_staging_learn_pmem();
}

bool sfs_inode_dax_flushes(struct sfs_inode *in)
{
	if (!in->dax || !atomic_load_explicit(&in->maps.sync, memory_order_relaxed) ||
	    !atomic_load_explicit(&in->fsynced, memory_order_relaxed))
		return false;
	if (sfs_pmem_ready())
		return true;
	/* Until the primitives are known, stores are plain (the caller marks
	 * the inode kdirty, so the next fsync is the kernel's). */
	if (sfs_pmem_gave_up()) {
		atomic_store(&in->maps.sync, false); /* left to the kernel's fsync */
	} else {
		sfs_stat_event(SFS_EV_dax_unflushed, 1);
		sfs_inode_dax_learn(in);
	}
	return false;
}
