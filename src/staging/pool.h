/* SPDX-License-Identifier: Apache-2.0 */
/* The staging pool: empty staging stores (stage.h, format.h), unnamed
 * O_TMPFILEs in <root>/.splitfs until a window binds one to its file, so
 * the append path rarely creates a file or a mapping.
 *  - rings: sized SPLITFS_STAGING_SIZE (less under a low RLIMIT_FSIZE),
 *    allocated and mapped once; returned rings go straight back to the
 *    pool with their pages.
 *  - files: made ahead by a background thread; returned ones are emptied
 *    by it (ftruncate to the header drops their pages unwritten).
 * Rings are budgeted (SFS_MAX_RINGS per process, in use or pooled). */
#ifndef SFS_STAGING_POOL_H
#define SFS_STAGING_POOL_H

#include "stage.h"

#define SFS_MAX_RINGS 64

/* Fills st with an empty store of the given kind. 0 or -errno. */
int sfs_staging_get(int kind, struct sfs_stage *st);

/* Gives a store back (its contents are discarded). */
void sfs_staging_put(struct sfs_stage *st);

/* Closes every store the pool holds ready (descriptors are short);
 * returns how many. */
int sfs_staging_release_pool(void);

/* Asks the background thread to do its housekeeping soon, starting it if
 * needed. */
void sfs_staging_kick(void);

/* The housekeeping: evicting closed writable inodes (fs/inode.h), which
 * the layer above registers at start-up. */
void sfs_staging_set_housekeeping(void (*fn)(void));

/* Asks the background thread to learn libpmem2's primitives, from a file
 * of its own on the managed (DAX) file system (util/pmem.h:
 * sfs_pmem_learn_claim). */
void sfs_staging_learn_pmem(void);

/* A forked child: forget the pool and its thread (closing the descriptors
 * and unmapping the rings, which belong to the parent). */
void sfs_staging_reset_child(void);

/* Stops the thread (process exit). */
void sfs_staging_shutdown(void);

#endif
