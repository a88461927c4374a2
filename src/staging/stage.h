/* SPDX-License-Identifier: Apache-2.0 */
/* An inode's staging store: where appended bytes live until relink. Two
 * layouts, chosen when a store is taken:
 *
 *  ring  an in-memory ring (memfd, mapped once, kept across windows and
 *        across files through the pool). File offset off lives at
 *        off mod cap; a window never holds more than cap bytes. Its pages
 *        stay allocated and writable, so a steady append stream takes no
 *        page fault at all; nothing is ever written back. Relink copies.
 *        The layout for POSIX mode on page-cache file systems, where a copy
 *        relink is the cheaper one (relink.c has the measurements).
 *  file  an O_TMPFILE on the managed file system holding the window at the
 *        target's own offsets (sparse below it), mapped in chunks. The only
 *        layout exchange and clone can relink, used when one of them is
 *        forced (SPLITFS_RELINK=exchange|clone).
 *
 * The store is used under the inode lock, except reads, which run under
 * the inode's read barrier (inode.h). */
#ifndef SFS_STAGING_STAGE_H
#define SFS_STAGING_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "../map/maptab.h"

enum sfs_stage_kind { SFS_STAGE_NONE, SFS_STAGE_RING, SFS_STAGE_FILE };

struct sfs_stage {
	int kind;
	int fd;			/* the memfd or the O_TMPFILE (internal), or -1 */
	int64_t cap;		/* ring: its size; file: the file's current size */
	char *ring;		/* ring: the whole mapping */
	struct sfs_maptab maps; /* file: chunk mappings at the target's offsets */
};

/* Takes a store of the layout the options ask for. 0 or -errno (-ENOBUFS:
 * the staging budget is spent; the caller writes through the kernel). */
int sfs_stage_attach(struct sfs_stage *st);

/* Gives the store back to the pool. */
void sfs_stage_detach(struct sfs_stage *st);

/* Makes the window [base, end) addressable. -ENOSPC: a ring cannot hold it
 * (the caller relinks and starts a new window). */
int sfs_stage_cover(struct sfs_stage *st, int64_t base, int64_t end);

/* Moves n bytes between buf and the window at file offset off. 0, -EFAULT
 * (a copy faulted), or another -errno. */
int sfs_stage_xfer(struct sfs_stage *st, int64_t off, char *buf, size_t n, int to_stage);

/* The store's address of off if it is mapped (a ring always is), with the
 * contiguous length there (at most *len); NULL otherwise. Never maps. */
char *sfs_stage_peek(struct sfs_stage *st, int64_t off, size_t *len);

/* Zeroes window bytes [from, to) (a write past the end leaves a hole). */
int sfs_stage_zero(struct sfs_stage *st, int64_t from, int64_t to);

/* A forked child drops its copy of the parent's store (not to the pool). */
void sfs_stage_forget(struct sfs_stage *st);

/* After a relink: a file is truncated to 0 (its pages dropped unwritten);
 * a ring keeps its pages for the next window. */
void sfs_stage_empty(struct sfs_stage *st);

/* Where file offset off lives in the store's descriptor, and how many bytes
 * are contiguous there (for readers of the descriptor: relink by copy, the
 * registry's takeover). */
int64_t sfs_stage_fd_offset(int kind, int64_t cap, int64_t off, int64_t *contig);

#endif
