/* SPDX-License-Identifier: Apache-2.0 */
/* Which overwrites through the mappings bypass the CPU caches
 * (util/ntcopy.h). A store into a page that is not cached first reads each
 * of its lines from DRAM; a non-temporal store does not, but it also leaves
 * nothing cached, and costs more than a cached copy when the page is hot.
 * An overwrite is taken as cold when
 *  - it covers at least a whole 4 KiB block,
 *  - it does not start where the inode's previous overwrite ended (a
 *    sequential run's cached stores are cheap: the CPU prefetches them),
 *  - the file is larger than the last-level cache (smaller files: a
 *    program that overwrites one may keep all of it cached), and
 *  - its first block is not one this process's library read or wrote
 *    recently, as far as a table per inode remembers (such a block is
 *    likely still cached: the first write of a hot block takes the cold
 *    path, every later one the cached copy; so does a block read and then
 *    overwritten, a database's read-modify-write). The table exists from
 *    the file's first overwrite on: reads before it are not remembered.
 * A wrong guess costs time only, never a byte: both copies write the same
 * bytes into the same page cache. Not on DAX (the callers check: pmem has
 * its own copies). */
#ifndef SFS_FS_COLDWRITE_H
#define SFS_FS_COLDWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sfs_inode;

/* Whether the overwrite of n bytes at off should be copied with
 * non-temporal stores; notes its blocks (the first 64 KiB) as recently
 * written. Called by any writer of the inode, with or without its lock. */
bool sfs_cold_write(struct sfs_inode *in, int64_t off, size_t n);

/* Notes a read of n bytes at off through the mappings: its blocks are
 * cached now (nothing is noted before the inode's first overwrite). */
void sfs_cold_read(struct sfs_inode *in, int64_t off, size_t n);

/* Frees the inode's table (the inode is going). */
void sfs_cold_write_free(struct sfs_inode *in);

#endif
