/* SPDX-License-Identifier: Apache-2.0 */
/* Making the kernel's view of a file complete: relink at fsync, close,
 * truncate and before every call the library passes to the kernel. */
#ifndef SFS_FS_FLUSH_H
#define SFS_FS_FLUSH_H

#include <stdbool.h>
#include <stdint.h>

#include "inode.h"

/* Moves the staging window, if any, into the target (relink/relink.h
 * picks the backend; durable: an fsync follows). Caller holds the inode
 * lock with the barrier closed. */
int sfs_relink(struct sfs_inode *in, bool durable);

enum sfs_flush {
	SFS_FLUSH_VISIBLE, /* other processes and the kernel must see the data */
	SFS_FLUSH_DURABLE, /* ... and an fsync follows: use the atomic backend */
};

/* Relinks the staging window, if any. Caller holds the inode lock. */
int sfs_inode_flush_locked(struct sfs_inode *in, enum sfs_flush how);
int sfs_inode_flush(struct sfs_inode *in, enum sfs_flush how);

/* fsync/fdatasync semantics: relink atomically, then the real call on fd
 * (the application's), or on the library's own descriptor where fd is -1. */
int sfs_inode_sync(struct sfs_inode *in, int fd, bool datasync);

/* The application syncs the file (sfs_inode_sync's first step; also an
 * fsync made while its descriptor was pending, at the promotion). */
void sfs_inode_synced_by_app(struct sfs_inode *in);

/* ftruncate(fd, len) or truncate(path, len) on a managed inode. */
int sfs_inode_truncate(struct sfs_inode *in, int fd, const char *path, int64_t len);

/* Before a thread waits for the operation log: relinks the windows of the
 * inodes whose lock it holds (see flush.c). */
void sfs_relink_held(void);

/* A checkpoint of the operation log: relinks in's window, if any, taking
 * its lock (flush.c says why this cannot deadlock). */
void sfs_relink_for_checkpoint(struct sfs_inode *in);

/* Relinks every inode of the process (exec, fork, sync, syncfs). */
void sfs_flush_all(void);

/* The process is leaving without exit() (_exit, _Exit, exit_group): what
 * it staged goes into its files now, as the kernel would have it there.
 * Windows whose lock another thread holds, or whose readers are busy (the
 * caller may be a signal handler), stay in their stores, which recovery
 * puts back (staging/adopt.h). No allocation, no waiting. */
void sfs_flush_before_exit(void);

#endif
