/* SPDX-License-Identifier: Apache-2.0 */
/* A sequential overwriter's pages, made cheap to store into ahead of it
 * (ahead.c says how and why). */
#ifndef SFS_FS_AHEAD_H
#define SFS_FS_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inode.h"

/* Called by a sequential run of overwrites of [off, end) below limit (where
 * the target's mapping may not go: its end of file or its window's start),
 * before its stores. in->t_populated is the frontier already prepared. */
void sfs_write_ahead(struct sfs_inode *in, int64_t off, int64_t end, int64_t limit);

/* Called by an overwrite of off that continues no run, below limit,
 * before its stores: the second such overwrite of a chunk since the pages
 * were last written back unmaps the chunk, so that its stores fault whole
 * folios back, not 4 KiB pages (ahead.c). */
void sfs_write_scattered(struct sfs_inode *in, int64_t off, int64_t limit);

/* An overwrite of [off, off + n) below the boundary, before its stores:
 * true when it should be a pwrite instead. In a file whose page cache
 * holds 4 KiB folios, a store into a page not written since the last
 * writeback takes a write fault that costs more than the pwrite; a page
 * written once is stored into from its second write on (ahead.c). Marks
 * the range's pages written (the marks are hints: racing callers may lose
 * one, which costs a pwrite or a fault, never a byte). Caller holds the
 * inode lock or, for an overwrite without it, a read section. */
bool sfs_write_by_kernel(struct sfs_inode *in, int64_t off, size_t n, bool sequential);

/* Frees what the functions above keep for the inode (its last user). */
void sfs_write_ahead_free(struct sfs_inode *in);

/* The target's pages were written back (write-protected): what was
 * prepared for the stores is undone. Without the lock: a reset lost to a
 * racing writer only costs faults. */
void sfs_write_ahead_reset(struct sfs_inode *in);

#endif
