/* SPDX-License-Identifier: Apache-2.0 */
/* Open-file objects: what the kernel calls an open file description. dup'd
 * descriptors share one (one offset, one set of flags); each refers to one
 * inode object. Objects are type-stable (kept on a free list, never returned
 * to malloc) so a lock-free fd lookup may safely try to take a reference on
 * an object that is being freed: sfs_file_tryget fails on a zero count. */
#ifndef SFS_FS_FILE_H
#define SFS_FS_FILE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sfs_inode;

struct sfs_file {
	atomic_int refs;	  /* fd-table entries + operations in flight */
	atomic_int flags;	  /* open(2) flags: access mode, O_APPEND, ... */
	pthread_mutex_t pos_lock; /* serialises read/write/lseek on the offset */
	int64_t pos;
	/* The kernel's open file at the application's descriptors is the
	 * inode's (kfd's), shared and adapted (inode.h), not the one its open
	 * made: leaving the file to the kernel gives it back (process.c). */
	bool kshared;
	/* Its offset lives in the kernel's open file (kpos.h): set once one
	 * of its descriptors is 0, 1 or 2, which stdio reads and writes
	 * through libc's internal calls, unseen by the library. */
	atomic_bool kpos;
	pthread_mutex_t kpos_lock; /* held from a pull to its push */
	int64_t kpos_at;	   /* the offset the last push left (pos_lock) */
	struct sfs_inode *inode;
	struct sfs_file *free_next;
};

/* A new file with one reference (the caller's), or NULL. Takes over the
 * caller's reference on inode. */
struct sfs_file *sfs_file_new(struct sfs_inode *inode, int flags, int64_t pos);

bool sfs_file_tryget(struct sfs_file *f);
void sfs_file_ref(struct sfs_file *f);
void sfs_file_put(struct sfs_file *f);

static inline int sfs_file_flags(const struct sfs_file *f)
{
	return atomic_load_explicit(&f->flags, memory_order_relaxed);
}

static inline bool sfs_file_readable(const struct sfs_file *f)
{
	int acc = sfs_file_flags(f) & 3;
	return acc == 0 /* O_RDONLY */ || acc == 2 /* O_RDWR */;
}

static inline bool sfs_file_writable(const struct sfs_file *f)
{
	int acc = sfs_file_flags(f) & 3;
	return acc == 1 /* O_WRONLY */ || acc == 2 /* O_RDWR */;
}

/* Reinitialises the locks of a file inherited by a forked child. */
void sfs_file_reset_free_list(void);

#endif
