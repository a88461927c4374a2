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
 * closed. */
#ifndef SFS_RELINK_RELINK_H
#define SFS_RELINK_RELINK_H

#include <stdbool.h>
#include <stdint.h>

#include "../fs/inode.h"

struct sfs_relink_ops {
	const char *name;
	int kind; /* enum sfs_relink_kind */
	/* Returns 0, or -errno. -EOPNOTSUPP/-ENOTTY/-EXDEV: the backend does not
	 * work on this file system (nothing was changed). */
	int (*commit)(struct sfs_inode *in, int64_t base, int64_t size);
};

extern const struct sfs_relink_ops sfs_relink_exchange;
extern const struct sfs_relink_ops sfs_relink_clone;
extern const struct sfs_relink_ops sfs_relink_copy;

/* Relinks the window. Small windows are copied (see relink.c for the
 * measurements); durable: the caller will fsync, and a backend forced with
 * SPLITFS_RELINK is then used whatever the size. */
int sfs_relink(struct sfs_inode *in, bool durable);

/* The backend durable relinks use now (after probing), for messages. */
const char *sfs_relink_backend_name(void);

#endif
