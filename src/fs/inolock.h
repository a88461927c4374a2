/* SPDX-License-Identifier: Apache-2.0 */
/* An inode's writer lock, its barrier and its readers' sections (the
 * protocol is described at the top of inode.h). Included at the end of
 * inode.h, where struct sfs_inode is complete. */
#ifndef SFS_FS_INOLOCK_H
#define SFS_FS_INOLOCK_H

#include "inode.h"

/* --- readers ------------------------------------------------------------ */

void sfs_read_wait(struct sfs_inode *in);

static inline int sfs_my_reader_slot(void)
{
	int s = sfs_reader_slot;
	return sfs_likely(s >= 0) ? s : sfs_reader_slot_assign();
}

/* The reader counts and the barrier are all seq_cst: a reader that saw the
 * barrier open is counted before the closer, which closed it first, looks
 * at its slot. */
static inline void sfs_read_enter(struct sfs_inode *in)
{
	sfs_busy_enter(); /* a signal handler must not wait for this reader */
	atomic_int *n = &in->readers[sfs_my_reader_slot()].n;
	for (;;) {
		atomic_fetch_add(n, 1);
		if (!atomic_load(&in->barrier))
			return;
		atomic_fetch_sub(n, 1);
		sfs_read_wait(in);
	}
}

static inline void sfs_read_exit(struct sfs_inode *in)
{
	atomic_fetch_sub_explicit(&in->readers[sfs_reader_slot].n, 1, memory_order_release);
	sfs_busy_exit();
}

/* Where the target's bytes end and the window's begin (inode.h, top):
 * base while a window is open, ksize otherwise. */
static inline int64_t sfs_inode_boundary(struct sfs_inode *in)
{
	return atomic_load(&in->staged) ? atomic_load(&in->base) : atomic_load(&in->ksize);
}

/* Whether a reader is in a read section now. */
static inline bool sfs_readers_active(struct sfs_inode *in)
{
	for (int i = 0; i < SFS_READER_SLOTS; i++)
		if (atomic_load(&in->readers[i].n))
			return true;
	return false;
}

/* --- the writer lock and other processes ---------------------------------- */

void sfs_inode_lock(struct sfs_inode *in);
void sfs_inode_unlock(struct sfs_inode *in);
/* The lock if it is free now; false otherwise. */
bool sfs_inode_trylock(struct sfs_inode *in);
/* The inodes whose lock this thread holds (at most max into out). */
int sfs_inode_held(struct sfs_inode **out, int max);
/* Whether this thread holds in's lock (among the first four it took). */
bool sfs_inode_held_here(const struct sfs_inode *in);

/* Close and reopen the barrier; the caller holds the inode lock. */
void sfs_barrier_close(struct sfs_inode *in);
void sfs_barrier_open(struct sfs_inode *in);

#endif
