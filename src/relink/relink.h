/* SPDX-License-Identifier: Apache-2.0 */
/* Relink: moving an inode's staging window [base, size) into the target file
 * and setting the target's size to size.
 *
 *  exchange  XFS_IOC_EXCHANGE_RANGE with XFS_EXCHANGE_RANGE_TO_EOF. The
 *            staging file holds the window at the target's own offsets and is
 *            cut to exactly `size` first, so one logged exchange swaps the
 *            blocks and the two file sizes together: after a crash the target
 *            has either its old size and blocks or the new ones. No data copy.
 *  clone     FICLONERANGE of the window (XFS older than 6.10, btrfs). Shares
 *            the blocks instead of moving them; the target's size changes at
 *            the end of the remap.
 *  copy      pwrite from the staging mappings (ext4, tmpfs, anything). Also
 *            the cheap path when relinking only for visibility (close, mmap,
 *            fork): it writes to the page cache and never forces writeback,
 *            while exchange and clone first write the staged pages back.
 *
 * Every backend leaves the staging file empty (truncated to 0, which drops
 * its pages without writeback). Callers hold the inode lock with the barrier
 * closed. The inode itself is the file system's (fs/flush.c: sfs_relink):
 * this layer sees the target and the window's store only. */
#ifndef SFS_RELINK_RELINK_H
#define SFS_RELINK_RELINK_H

#include <stdbool.h>
#include <stdint.h>

#include "../staging/stage.h"

/* What a relink moves: the window's store into the target file. */
struct sfs_relink_target {
	int kfd;		 /* the target (the inode's descriptor) */
	int64_t ksize;		 /* the target's size as this process left it */
	struct sfs_stage *stage; /* the window's store */
	bool dax;		 /* the file's data lies on DAX (fs/inode.h) */
};

struct sfs_relink_ops {
	const char *name;
	int kind; /* enum sfs_relink_kind */
	/* Returns 0, or -errno. -EOPNOTSUPP/-ENOTTY/-EXDEV: the backend does not
	 * work on this file system (nothing was changed). */
	int (*commit)(const struct sfs_relink_target *t, int64_t base, int64_t size);
};

extern const struct sfs_relink_ops sfs_relink_exchange;
extern const struct sfs_relink_ops sfs_relink_clone;
extern const struct sfs_relink_ops sfs_relink_copy;

/* The backend for the window [base, size). Small windows are copied (see
 * relink.c for the measurements); durable: the caller will fsync, and a
 * backend forced with SPLITFS_RELINK is then used whatever the size. */
const struct sfs_relink_ops *sfs_relink_choose(const struct sfs_relink_target *t, int64_t base,
					       int64_t size, bool durable);

/* 0 if the target still has the size this process left it at; otherwise
 * says so and returns -EIO: the window must not be written over another
 * process's change. */
int sfs_relink_check(const struct sfs_relink_target *t);

/* Moves the window [base, size) with ops (stepping down to the next backend
 * where the file system does not support it) and empties the store. t0:
 * sfs_stat_start() when the relink began. 0 or -errno. */
int sfs_relink_commit(const struct sfs_relink_ops *ops, const struct sfs_relink_target *t,
		      int64_t base, int64_t size, uint64_t t0);

/* For the block-moving backends: fails with -EOPNOTSUPP unless the store is
 * a file, and cuts it at the window's end (size), so that the staged data
 * ends at the target's new EOF. 0 or -errno. */
int sfs_relink_cut_store(const struct sfs_relink_target *t, int64_t size);

/* The backend durable relinks use now (after probing), for messages. */
const char *sfs_relink_backend_name(void);

#endif
