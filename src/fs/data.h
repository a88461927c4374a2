/* SPDX-License-Identifier: Apache-2.0 */
/* Data operations on an inode (reads: read.h): overwrites as memcpy on mappings,
 * appends into the staging window, and the kernel fallback that gives the
 * kernel's own answer whenever the fast path cannot (a fault on a bad user
 * buffer, a mapping budget exhausted, offsets past the radix). */
#ifndef SFS_FS_DATA_H
#define SFS_FS_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "inode.h"

/* The largest count one read or write moves, as the kernel clamps it. */
#define SFS_MAX_RW_COUNT ((size_t)0x7ffff000)

/* The most a write takes without the inode lock (under the locks of its
 * stripes: data.c's overwrite_unlocked, sfs_logged_overwrite_unlocked):
 * a read section held across a larger one would keep a relink waiting. */
#define SFS_UNLOCKED_WRITE_MAX ((size_t)256 << 10)

/* The bytes a (validated) vector covers. */
static inline uint64_t sfs_iov_total(const struct iovec *iov, int cnt)
{
	uint64_t total = 0;
	for (int i = 0; i < cnt; i++)
		total += iov[i].iov_len;
	return total;
}

/* One write at off as POSIX mode does it: stores below the staging
 * boundary, appends into the staging window, the kernel when neither can.
 * Returns n or -errno. Caller holds the lock and has applied the limits. */
ssize_t sfs_inode_write_locked(struct sfs_inode *in, const void *buf, size_t n, int64_t off);

/* Writes n bytes at off, or at the end of file when append is set; *at
 * receives the offset used. Returns the count or -errno. */
ssize_t sfs_inode_pwrite(struct sfs_inode *in, const void *buf, size_t n, int64_t off, bool append,
			 int64_t *at);

/* The same for a vector, under one lock (writev is atomic with respect to
 * other writers of the file, as in the kernel). iov must be validated. */
ssize_t sfs_inode_pwritev(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off,
			  bool append, int64_t *at);

/* Gives the window's space reservation back (it was relinked or dropped).
 * Caller holds the lock. */
void sfs_inode_unreserve_locked(struct sfs_inode *in);

#endif
