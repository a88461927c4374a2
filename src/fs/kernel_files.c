/* SPDX-License-Identifier: Apache-2.0 */
/* The sets of files this process treats specially whatever their inode
 * objects do: files left to the kernel (demoted) and files with POSIX
 * record locks (inode.h). */
#define _GNU_SOURCE
#include "inode.h"

#include "../util/msg.h"
#include "inoset.h"
#include "registry.h"

static struct sfs_inoset demoted = SFS_INOSET_INIT; /* files left to the kernel */
static struct sfs_inoset locked = SFS_INOSET_INIT;  /* files with POSIX locks */

void sfs_kernel_sets_reset(void)
{
	sfs_inoset_reset_lock(&demoted);
	sfs_inoset_reset_lock(&locked);
}

void sfs_demoted_pin_all(void)
{
	sfs_inoset_each(&demoted, sfs_reg_pin);
}

bool sfs_demoted(dev_t dev, ino_t ino)
{
	return sfs_inoset_has(&demoted, dev, ino);
}

void sfs_demoted_add(dev_t dev, ino_t ino)
{
	/* The process keeps using the file through the kernel: others must
	 * know it has the file open. */
	sfs_reg_pin(dev, ino);
	if (!sfs_inoset_add(&demoted, dev, ino))
		sfs_warn("too many files left to the kernel; a later open may manage one again");
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
