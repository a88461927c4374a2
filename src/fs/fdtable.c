/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "fdtable.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "../util/signals.h"

struct fd_array {
	int n;
	_Atomic(struct sfs_file *) slot[];
};

static _Atomic(struct fd_array *) table;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int high_water;

struct sfs_file *sfs_fd_get(int fd)
{
	struct fd_array *a = atomic_load_explicit(&table, memory_order_acquire);
	if (fd < 0 || !a || fd >= a->n)
		return NULL;
	for (;;) {
		struct sfs_file *f = atomic_load_explicit(&a->slot[fd], memory_order_acquire);
		if ((uintptr_t)f <= (uintptr_t)SFS_FD_DSYNC) /* empty, or a mark */
			return NULL;
		if (sfs_file_tryget(f)) {
			/* The file may have been closed and its object reused for
			 * another descriptor in between: confirm it is still ours. */
			if (atomic_load_explicit(&a->slot[fd], memory_order_acquire) == f)
				return f;
			sfs_file_put(f);
		}
		a = atomic_load_explicit(&table, memory_order_acquire);
		if (fd >= a->n)
			return NULL;
	}
}

bool sfs_fd_is_internal(int fd)
{
	struct fd_array *a = atomic_load_explicit(&table, memory_order_acquire);
	return fd >= 0 && a && fd < a->n &&
	       atomic_load_explicit(&a->slot[fd], memory_order_relaxed) == SFS_FD_INTERNAL;
}

bool sfs_fd_is_dsync(int fd)
{
	struct fd_array *a = atomic_load_explicit(&table, memory_order_acquire);
	return fd >= 0 && a && fd < a->n &&
	       atomic_load_explicit(&a->slot[fd], memory_order_relaxed) == SFS_FD_DSYNC;
}

/* Caller holds table_lock. Grows the array to cover fd. */
static struct fd_array *cover(int fd)
{
	struct fd_array *a = atomic_load_explicit(&table, memory_order_relaxed);
	if (a && fd < a->n)
		return a;
	int n = a ? a->n : 256;
	while (n <= fd)
		n *= 2;
	struct fd_array *b = calloc(1, sizeof(*b) + (size_t)n * sizeof(b->slot[0]));
	if (!b)
		return NULL;
	b->n = n;
	for (int i = 0; a && i < a->n; i++)
		atomic_store_explicit(&b->slot[i], atomic_load(&a->slot[i]), memory_order_relaxed);
	/* The old array is deliberately leaked: lock-free readers may hold it. */
	atomic_store_explicit(&table, b, memory_order_release);
	return b;
}

static void set_slot(int fd, struct sfs_file *v)
{
	struct fd_array *a = cover(fd);
	if (!a)
		return;
	atomic_store_explicit(&a->slot[fd], v, memory_order_release);
	if (fd >= atomic_load(&high_water))
		atomic_store(&high_water, fd + 1);
}

int sfs_fd_install(int fd, struct sfs_file *f)
{
	if (fd < 0)
		return -EBADF;
	sfs_file_ref(f);
	sfs_mutex_lock(&table_lock);
	struct fd_array *a = cover(fd);
	struct sfs_file *old = a ? atomic_load(&a->slot[fd]) : NULL;
	if (a)
		atomic_store_explicit(&a->slot[fd], f, memory_order_release);
	if (fd >= atomic_load(&high_water))
		atomic_store(&high_water, fd + 1);
	sfs_mutex_unlock(&table_lock);
	if (!a) {
		sfs_file_put(f);
		return -ENOMEM;
	}
	/* A stale entry means the kernel reused the number behind our back
	 * (an fd closed through a path we do not see): drop our reference. */
	if ((uintptr_t)old > (uintptr_t)SFS_FD_DSYNC)
		sfs_file_put(old);
	return 0;
}

struct sfs_file *sfs_fd_remove(int fd)
{
	struct fd_array *a = atomic_load_explicit(&table, memory_order_acquire);
	if (fd < 0 || !a || fd >= a->n)
		return NULL;
	sfs_mutex_lock(&table_lock);
	a = atomic_load(&table);
	struct sfs_file *f = atomic_load(&a->slot[fd]);
	if (f == SFS_FD_INTERNAL) {
		f = NULL;
	} else if (f) {
		atomic_store_explicit(&a->slot[fd], NULL, memory_order_release);
		if (f == SFS_FD_DSYNC)
			f = NULL;
	}
	sfs_mutex_unlock(&table_lock);
	return f;
}

void sfs_fd_set_internal(int fd, bool internal)
{
	if (fd < 0)
		return;
	sfs_mutex_lock(&table_lock);
	if (internal)
		set_slot(fd, SFS_FD_INTERNAL);
	else {
		struct fd_array *a = atomic_load(&table);
		if (a && fd < a->n && atomic_load(&a->slot[fd]) == SFS_FD_INTERNAL)
			atomic_store(&a->slot[fd], NULL);
	}
	sfs_mutex_unlock(&table_lock);
}

void sfs_fd_set_dsync(int fd, bool dsync)
{
	if (fd < 0)
		return;
	sfs_mutex_lock(&table_lock);
	struct fd_array *a = atomic_load(&table);
	struct sfs_file *cur = a && fd < a->n ? atomic_load(&a->slot[fd]) : NULL;
	if (dsync && !cur)
		set_slot(fd, SFS_FD_DSYNC);
	else if (!dsync && cur == SFS_FD_DSYNC)
		atomic_store(&a->slot[fd], NULL);
	sfs_mutex_unlock(&table_lock);
}

int sfs_fd_limit(void)
{
	return atomic_load(&high_water);
}

void sfs_fd_reset(bool dsync)
{
	pthread_mutex_init(&table_lock, NULL);
	struct fd_array *a = atomic_load(&table);
	for (int i = 0; a && i < a->n; i++) {
		struct sfs_file *f = atomic_load(&a->slot[i]);
		if (f == SFS_FD_DSYNC || f == SFS_FD_INTERNAL)
			atomic_store(&a->slot[i], f == SFS_FD_DSYNC ? f : NULL);
		else if (f)
			atomic_store(&a->slot[i], dsync ? SFS_FD_DSYNC : NULL);
	}
}
