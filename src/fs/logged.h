/* SPDX-License-Identifier: Apache-2.0 */
/* The file system's side of the operation log of sync and strict modes
 * (oplog/oplog.h): writes logged, then applied (logged.c); commits; what
 * the log's checkpoints ask of the files. */
#ifndef SFS_FS_LOGGED_H
#define SFS_FS_LOGGED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "../oplog/oplog.h"
#include "inode.h"

/* The write logged, then applied. The caller holds the inode lock and has
 * applied the size limits. */
ssize_t sfs_logged_pwritev(struct sfs_inode *in, const struct iovec *iov, int cnt, size_t n,
			   int64_t off);

/* Sync mode's durable overwrite (one pwritev2 with RWF_DSYNC, as
 * sfs_logged_pwritev makes it of a file the log holds no record of)
 * without the inode lock, under the locks of its stripes only, so that
 * threads writing different parts of one file wait for the device at
 * once. -EAGAIN: not such a write now (the caller takes the lock). */
ssize_t sfs_logged_overwrite_unlocked(struct sfs_inode *in, const void *buf, size_t n, int64_t off);

/* Makes the file durable and kills its records (sfs_oplog_commit), its
 * window relinked first: a DAX window's bytes are only in the records.
 * Caller holds the inode lock. */
int sfs_inode_log_commit(struct sfs_inode *in);

/* A strict-mode write made durable but not atomic, as README ("Limits of
 * sync and strict modes") says such a write is (what: which kind). Counted
 * (stats: strict_not_atomic) and, with SPLITFS_VERBOSE, said once: not
 * written on every program's stderr, where a program that checks its own
 * output (git's tests, with GIT_TRACE appended to by many processes)
 * would find it. */
void sfs_strict_not_atomic(const char *what);

/* The file system's ops of the log, which start-up registers
 * (sfs_oplog_set_ops). */
extern const struct sfs_oplog_ops sfs_fs_oplog_ops;

#endif
