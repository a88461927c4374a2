/* SPDX-License-Identifier: Apache-2.0 */
/* A set of files (dev, ino), fixed capacity, for the few per-process facts
 * the library must remember about a file whether or not it has an inode
 * object for it (files left to the kernel, files with POSIX locks). Members
 * are never removed; an empty set answers in one load. */
#ifndef SFS_FS_INOSET_H
#define SFS_FS_INOSET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#define SFS_INOSET_CAP 8192

struct sfs_inoset_slot {
	dev_t dev;
	ino_t ino; /* 0: empty slot */
};

/* Small, so that a set can live with the variables every start and fork
 * touches (compiler.h, SFS_HOT): its table is allocated by the first add. */
struct sfs_inoset {
	pthread_mutex_t lock;
	atomic_int count;
	struct sfs_inoset_slot *slot; /* SFS_INOSET_CAP of them, or NULL */
};

#define SFS_INOSET_INIT                                                                            \
	{                                                                                          \
		.lock = PTHREAD_MUTEX_INITIALIZER                                                  \
	}

bool sfs_inoset_has(struct sfs_inoset *s, dev_t dev, ino_t ino);

/* Returns false when the set is (three quarters) full, or its table could
 * not be allocated: not added. */
bool sfs_inoset_add(struct sfs_inoset *s, dev_t dev, ino_t ino);

/* Calls fn on every member. */
void sfs_inoset_each(struct sfs_inoset *s, void (*fn)(dev_t, ino_t));

/* A forked child: the lock may have been held by another thread. */
void sfs_inoset_reset_lock(struct sfs_inoset *s);

#endif
