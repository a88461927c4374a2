/* SPDX-License-Identifier: Apache-2.0 */
/* The write path of a sharing session (share.h, data.c's caller). */
#ifndef SFS_FS_SHAREWRITE_H
#define SFS_FS_SHAREWRITE_H

#include <sys/types.h>

#include "inode.h"

/* A POSIX-mode overwrite of a file that is not leased, in the inode's
 * session: n, or -EAGAIN (not such a write, or it faulted: the kernel's
 * write, under the block locks). */
ssize_t sfs_share_overwrite(struct sfs_inode *in, const void *buf, size_t n, int64_t off);

/* Before a POSIX-mode overwrite of a file that is not leased: a session
 * if the file may have one. Caller holds the inode lock. */
void sfs_share_maybe_locked(struct sfs_inode *in);

/* The inode's session ends, if it has one: the file is leased again, or
 * the inode goes. Caller holds the lock. */
void sfs_inode_share_end_locked(struct sfs_inode *in);

#endif
