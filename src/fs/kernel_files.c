/* SPDX-License-Identifier: Apache-2.0 */
/* The set of files this process treats specially whatever their inode
 * objects do: files with POSIX record locks (inode.h). */
#define _GNU_SOURCE
#include "kernel_files.h"

#include "inode.h"

#include "../util/compiler.h"
#include "../util/msg.h"
#include "inoset.h"

SFS_HOT static struct sfs_inoset locked = SFS_INOSET_INIT; /* files with POSIX locks */

void sfs_kernel_sets_reset(void)
{
	sfs_inoset_reset_lock(&locked);
}

bool sfs_posix_locked(dev_t dev, ino_t ino)
{
	return sfs_inoset_has(&locked, dev, ino);
}

void sfs_posix_locked_add(dev_t dev, ino_t ino)
{
	if (!sfs_inoset_add(&locked, dev, ino))
		sfs_warn("too many files with POSIX locks to track");
	struct sfs_inode *in = sfs_inode_find(dev, ino);
	if (in) {
		atomic_store(&in->posix_locks, true);
		sfs_inode_put(in);
	}
}
