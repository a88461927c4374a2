/* SPDX-License-Identifier: Apache-2.0 */
/* An inode's staging store: where appended bytes live until relink. A store
 * is a file in <root>/.splitfs (format.h: a 4 KiB header, then the data),
 * so that what a write() returned for outlives the process; two layouts,
 * chosen when a store is taken:
 *
 *  ring  file offset off lives at off mod cap; a window never holds more
 *        than cap bytes. The file is allocated whole and mapped once, kept
 *        across windows and across files through the pool: a steady append
 *        stream takes no page fault and no allocation. Relink copies. The
 *        layout for every mode unless a backend is forced.
 *  file  the window at the target's own offsets (sparse below it), mapped
 *        in chunks: the only layout exchange and clone can relink, used
 *        when one of them is forced (SPLITFS_RELINK=exchange|clone).
 *
 * A window is bound to its target (the store is linked by the target's
 * name in .splitfs, format.h) from its opening until the store is given
 * back. The store is used under the inode lock, except reads, which run
 * under the inode's read barrier (inode.h). */
#ifndef SFS_STAGING_STAGE_H
#define SFS_STAGING_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../map/maptab.h"
#include "format.h"

enum sfs_stage_kind {
	SFS_STAGE_NONE = 0,
	SFS_STAGE_RING = SFS_STORE_RING,
	SFS_STAGE_FILE = SFS_STORE_FILE
};

struct sfs_stage {
	int kind;
	int fd;	     /* the data: the ring file, or the .data file (internal) */
	int hfd;     /* the header's file: fd for a ring, its own for a file store */
	int64_t cap; /* ring: its data bytes; file: the data file's size */
	char *map;   /* ring: header and data; file: the header */
	struct sfs_store_hdr *hdr;
	struct sfs_maptab maps; /* file: chunk mappings of the data */
	bool bound;		/* linked as the target's store */
	uint64_t census;	/* the census counting its name (census.h), or 0 */
	dev_t dev;		/* the target it is bound to */
	ino_t ino;
	/* Where its name is between targets (sfs_store_park_name): linked
	 * once, a store has a name for good (parked: idle.*, or bound), or
	 * none and can never be bound again (spent). park_id: 0 until known. */
	bool parked, spent;
	uint64_t park_id;
};

/* Takes a store of the layout the options ask for. 0 or -errno (-ENOBUFS:
 * the staging budget is spent; -EFBIG: RLIMIT_FSIZE leaves no room for a
 * store; the caller writes through the kernel). */
int sfs_stage_attach(struct sfs_stage *st);

/* The store is no longer the target's (its window is relinked): it is
 * parked (renamed to its idle name). Async-signal-safe. */
void sfs_stage_unbind(struct sfs_stage *st);

/* Unbinds the store and gives it back to the pool. */
void sfs_stage_detach(struct sfs_stage *st);

/* Removes a parked store's names (it is being destroyed by its owner). */
void sfs_stage_unpark(bool file, bool parked, uint64_t park_id);

/* The process is leaving (exit, _exit, a fatal signal, exec): every parked
 * store's name goes, so that no store outlives it by name. A store parked
 * before this and bound after it (an exec that failed) is spent.
 * Async-signal-safe. */
void sfs_stage_unpark_all(void);

/* In a forked child: the parked stores are the parent's. */
void sfs_stage_reset_child(void);

/* Opens a window at base (the target's size) for the target open at kfd,
 * binding the store to it first. 0 or -errno (no window: the caller writes
 * through the kernel). */
int sfs_stage_open_window(struct sfs_stage *st, int kfd, dev_t dev, ino_t ino, int64_t base);

/* The window now holds its bytes up to end: an append is acknowledged. */
void sfs_stage_acknowledge(struct sfs_stage *st, int64_t end);

/* Makes the window [base, end) addressable. -ENOSPC: a ring cannot hold it
 * (the caller relinks and starts a new window); -EFBIG: the file layout
 * would pass RLIMIT_FSIZE. */
int sfs_stage_cover(struct sfs_stage *st, int64_t base, int64_t end);

/* Moves n bytes between buf and the window at file offset off. 0, -EFAULT
 * (a copy faulted), or another -errno. */
int sfs_stage_xfer(struct sfs_stage *st, int64_t off, char *buf, size_t n, int to_stage);

/* The store's address of off if it is mapped (a ring always is), with the
 * contiguous length there (at most *len); NULL otherwise. Never maps. */
char *sfs_stage_peek(struct sfs_stage *st, int64_t off, size_t *len);

/* The store file's offset of window offset off (exchange, clone). */
int64_t sfs_stage_file_offset(const struct sfs_stage *st, int64_t off);

/* A window that cannot be relinked (its file changed behind the lease):
 * the store is left bound, for recovery, and no longer this inode's. */
void sfs_stage_abandon(struct sfs_stage *st);

/* A forked child drops its copy of the parent's store (not to the pool). */
void sfs_stage_forget(struct sfs_stage *st);

/* A relink of the window starts writing it into the target (format.h's
 * relinking: recovery then takes a size between base and size as its). */
void sfs_stage_relinking(struct sfs_stage *st);

/* After a relink: the window is closed (state EMPTY); a file store drops
 * its data pages unwritten, a ring keeps its pages for the next window. */
void sfs_stage_empty(struct sfs_stage *st);

#endif
