/* SPDX-License-Identifier: Apache-2.0 */
/* POSIX mode: an fdatasync or fsync served by the operation log
 * (oplog/oplog.h).
 *
 * A write-ahead log (LevelDB's, Redis's with appendfsync always, SQLite's
 * WAL) appends a few KiB and fdatasyncs them. The kernel's fdatasync of an
 * append writes the data, then forces the file system's journal for the
 * new size: two waits for the device. When the file only grew since it was
 * last made durable, by at most SFS_LOGSYNC_MAX bytes, those bytes are
 * instead written as one WRITE_TIMED record of the process's log: one
 * synchronous write into pre-zeroed space, with no metadata to journal.
 * The page cache has them already. After a crash, recovery writes the
 * record into the file (oplog/recover.h), as for sync mode. The record
 * dies as sync mode's do: at a checkpoint, or with a COMMIT once the
 * kernel has made the file durable (its next kernel sync; the lease's end,
 * before another process may write the file; the last close; a fork; the
 * process's end).
 *
 * "Only grew" means: the file is leased (no other process writes it), not
 * on DAX (which has its own sync without a system call), no descriptor of
 * it is one whose writes the library may not see (kpos.h), and since the
 * last sync nothing was written below durable_end and the kernel made no
 * change to it (a truncation, a call passed through). A file is served so
 * from its SFS_LOGSYNC_STREAK-th small sync in a row, so that a program that
 * syncs a file a few times makes no log. A record carries the file's
 * modification time too (when it was logged, a moment after the last
 * write), which replay gives back (a WRITE_TIMED record, oplog/format.h), so
 * an fsync is served the same way, while no metadata call (chmod, rename,
 * utimes, ...) came since the file's last kernel fsync (dax.h: the kernel's
 * fsync would make that durable); an fsync with no bytes to log still
 * writes the time after the kernel's fdatasync. Times set on the file
 * (utimes) make its next sync the kernel's.
 * SPLITFS_LOGSYNC=0: never. */
#ifndef SFS_FS_LOGSYNC_H
#define SFS_FS_LOGSYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "inode.h"

/* The most bytes one record carries: past that the kernel's fdatasync
 * costs less than copying them through the log. */
#define SFS_LOGSYNC_MAX (64 << 10)
#define SFS_LOGSYNC_STREAK 4

/* The application fdatasyncs (datasync) or fsyncs in: true when the log
 * made it durable (the call returns 0), false when the kernel's sync must.
 * Takes the lock. */
bool sfs_logsync_try(struct sfs_inode *in, bool datasync);

/* Around the kernel's sync of in (flush.c): begin relinks the window
 * durably, under the lock it notes what the sync covers in (*covered: what
 * end needs), and returns 0 or -errno; end gets the sync's result and
 * returns the call's (the file's records die once it is durable). Take the
 * lock. POSIX mode: flush.c calls these and sfs_logsync_try only there. */
int sfs_logsync_kernel_begin(struct sfs_inode *in, int64_t *covered);
int sfs_logsync_kernel_end(struct sfs_inode *in, int64_t covered, bool datasync, int rc);

/* A write at off (append: at the end of the file) under the inode lock:
 * one below durable_end is a change the log cannot cover. */
static inline void sfs_logsync_wrote(struct sfs_inode *in, int64_t off, bool append)
{
	if (!append && atomic_load_explicit(&in->logsync, memory_order_relaxed) &&
	    off < atomic_load_explicit(&in->durable_end, memory_order_relaxed) &&
	    !atomic_load_explicit(&in->other_dirty, memory_order_relaxed))
		atomic_store(&in->other_dirty, true);
}

/* Files on the log's path now, in this process. */
extern atomic_int sfs_logsync_files;

/* The kernel changed the file (a truncation, a call passed to it, its
 * times set: a record's time would replace them at replay). */
static inline void sfs_logsync_changed(struct sfs_inode *in)
{
	if (atomic_load_explicit(&in->logsync, memory_order_relaxed))
		atomic_store(&in->other_dirty, true);
}

/* The lease is gone: the file is off the log's path until it earns it
 * again. Caller holds the lock (and commits the records, lease.c). */
void sfs_logsync_off_locked(struct sfs_inode *in);

#endif
