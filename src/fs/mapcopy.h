/* SPDX-License-Identifier: Apache-2.0 */
/* Copies between the application and a target file's chunk mappings, the
 * data path's inner loop (reads in read.c, writes in data.c). */
#ifndef SFS_FS_MAPCOPY_H
#define SFS_FS_MAPCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inode.h"

/* Moves n bytes between buf and file offset off of the target through its
 * chunk mappings. Returns 0, or -EFAULT when a copy faulted (the caller then
 * redoes the operation through the kernel), or another -errno.
 * Stores on DAX (in->dax) are flushed and fenced before it returns when the
 * flush primitives are known; otherwise, and for every piece the kernel
 * writes, the inode is marked kdirty (its fsync needs the kernel's). */
int sfs_map_copy(struct sfs_inode *in, int64_t off, char *buf, size_t n, bool to_file);

#endif
