/* SPDX-License-Identifier: Apache-2.0 */
/* Reads of a managed inode, without its lock (inode.h: readers). */
#ifndef SFS_FS_READ_H
#define SFS_FS_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "inode.h"

/* The file's size as the application sees it: the logical size of a
 * leased file, the kernel's otherwise. -errno if fstat fails. */
int64_t sfs_inode_size(struct sfs_inode *in);

/* Reads up to n bytes at off. Returns the count or -errno. */
ssize_t sfs_inode_pread(struct sfs_inode *in, void *buf, size_t n, int64_t off);

/* The same for a vector, as one read: no write of this process changes the
 * range while it is copied (versions.h). iov must be validated. */
ssize_t sfs_inode_preadv(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off);

#endif
