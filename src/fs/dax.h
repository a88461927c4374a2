/* SPDX-License-Identifier: Apache-2.0 */
/* Files on DAX (persistent memory): which inodes are, and the POSIX mode's
 * fsync without a system call (dax.c; inode.h has the fields). */
#ifndef SFS_FS_DAX_H
#define SFS_FS_DAX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct sfs_inode;

/* Whether the file's data lies on DAX as this process uses it: POSIX mode
 * on a DAX file (in->dax), or sync/strict modes with the log on DAX (their
 * writes are then stores, logged.c). No page cache: a store dirties no
 * folio and a write fault costs the same as a populate (fs/dax.c). */
bool sfs_inode_on_dax(const struct sfs_inode *in);

/* Decides in->dax (and maps.sync) for the inode's descriptor (fs/dax.c). */
void sfs_inode_dax_setup(struct sfs_inode *in);

/* Whether this inode's stores are flushed by the library (POSIX mode on
 * DAX, MAP_SYNC mappings, synced by the application before, libpmem2's
 * primitives known; if they are not, learning them starts in the
 * background). Caller holds the inode lock. */
bool sfs_inode_dax_flushes(struct sfs_inode *in);

/* Starts learning libpmem2's primitives in the background if this is a
 * POSIX-mode DAX file and no one has (the application synced it: its
 * stores will be flushed from now on). */
void sfs_inode_dax_learn(struct sfs_inode *in);

/* Counts the metadata calls the kernel served (chmod, utimes, rename, ...:
 * the "durable" rows of entrypoints.tsv). The kernel's fsync of a file
 * would make such a change of it durable; the DAX fsync without a system
 * call (flush.c) is taken only while none happened since the file's last
 * kernel fsync (per process, not per file: rare enough). */
extern _Atomic uint64_t sfs_meta_epoch;
static inline void sfs_meta_changed(void)
{
	atomic_fetch_add_explicit(&sfs_meta_epoch, 1, memory_order_relaxed);
}

/* Whether no metadata call came since the file's last kernel fsync: then
 * an fsync of it need not be the kernel's to make such a change durable
 * (the DAX fsync here, the log's: logsync.h). */
bool sfs_inode_meta_synced(const struct sfs_inode *in);

#endif
