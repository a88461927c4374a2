/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "file.h"

#include <stdlib.h>
#include <string.h>

#include "inode.h"
#include "../util/signals.h"

SFS_HOT static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
SFS_HOT static struct sfs_file *free_list;

struct sfs_file *sfs_file_new(struct sfs_inode *inode, int flags, int64_t pos)
{
	sfs_mutex_lock(&free_lock);
	struct sfs_file *f = free_list;
	if (f)
		free_list = f->free_next;
	sfs_mutex_unlock(&free_lock);
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f)
			return NULL;
	}
	pthread_mutex_init(&f->pos_lock, NULL);
	pthread_mutex_init(&f->kpos_lock, NULL);
	atomic_store_explicit(&f->kpos, false, memory_order_relaxed);
	f->pos = pos;
	f->kpos_at = pos;
	f->inode = inode;
	f->free_next = NULL;
	atomic_store_explicit(&f->flags, flags, memory_order_relaxed);
	/* Publishing a non-zero count last makes the object gettable. */
	atomic_store_explicit(&f->refs, 1, memory_order_release);
	return f;
}

bool sfs_file_tryget(struct sfs_file *f)
{
	int r = atomic_load_explicit(&f->refs, memory_order_relaxed);
	while (r > 0)
		if (atomic_compare_exchange_weak_explicit(&f->refs, &r, r + 1, memory_order_acquire,
							  memory_order_relaxed))
			return true;
	return false;
}

void sfs_file_ref(struct sfs_file *f)
{
	atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
}

void sfs_file_put(struct sfs_file *f)
{
	if (atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
		return;
	struct sfs_inode *inode = f->inode;
	bool wrote = sfs_file_writable(f);
	f->inode = NULL;
	pthread_mutex_destroy(&f->pos_lock);
	pthread_mutex_destroy(&f->kpos_lock);
	sfs_mutex_lock(&free_lock);
	f->free_next = free_list;
	free_list = f;
	sfs_mutex_unlock(&free_lock);
	if (inode) {
		if (wrote)
			sfs_inode_writer_gone(inode);
		sfs_inode_put(inode);
	}
}

void sfs_file_reset_free_list(void)
{
	sfs_mutex_reset_child(&free_lock);
}
