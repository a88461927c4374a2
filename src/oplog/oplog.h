/* SPDX-License-Identifier: Apache-2.0 */
/* The operation log of sync and strict modes (format.h has the layout), which
 * also serves POSIX mode's fdatasync of a file that only grew (fs/logsync.h).
 *
 * Every write to a managed file is first appended to this process's log as
 * a WRITE record carrying the data, written with one synchronous write
 * (RWF_DSYNC into pre-zeroed space: a data write and a cache flush, no
 * metadata), and only then applied to the file's page cache. So a write is
 * durable when it returns (sync) and, since recovery replays whole records
 * only, all or nothing after a crash (strict). fsync has nothing left to do.
 *
 * A checkpoint (when the log is full, and at exit) fsyncs every file the
 * log covers and starts a new generation. A file leaving the process (last
 * close, its lease broken by another process's open) is fsynced and gets a
 * COMMIT record,
 * so replay never rewrites it with data that is older than what another
 * process may write to it later.
 *
 * A write holds a ticket from sfs_oplog_write until it has been applied:
 * a checkpoint waits for every ticket, so no record dies before its data
 * is in the file. */
#ifndef SFS_OPLOG_OPLOG_H
#define SFS_OPLOG_OPLOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* One file's place in the log, kept by the file system in the file's inode
 * (fs/inode.h) and written under the inode lock: the file's id in the
 * log's generation gen, and whether records since its last COMMIT exist.
 * logged is atomic: close and the last put read it without the lock, to
 * skip the lock (commit_file, release_if_last), and unlocked writers set
 * it. id and gen are stored atomically (gen last) for
 * sfs_oplog_write_bound, which reads them without the lock. */
struct sfs_oplog_file {
	uint32_t id;
	uint64_t gen;
	atomic_bool logged;
	/* The error of the file's last fdatasync that failed (-errno), 0 when
	 * one has succeeded since: its records are written into it again
	 * before the next one (sfs_oplog_sync_file). */
	_Atomic int wb_error;
};

/* What the log needs from the file system above it, registered once at
 * start-up (sfs_oplog_set_ops) before the log is used. */
struct sfs_oplog_ops {
	/* Before this thread waits for a checkpoint: relinks the windows of
	 * the inodes whose lock it holds (fs/flush.h: sfs_relink_held). */
	void (*relink_held)(void);
	/* The checkpoint's part in the files, with the log closed to new
	 * claims: every file's window relinked, and every file with records
	 * (logged) made durable (fdatasync). Returns 0, or the first error
	 * of those fdatasyncs: then the records are the only durable copy of
	 * what they hold, and the checkpoint fails without killing them. */
	int (*sync_files)(void);
};

void sfs_oplog_set_ops(const struct sfs_oplog_ops *ops);

/* Whether writes go through the log (sync or strict mode). */
bool sfs_oplog_on(void);

/* Whether the log is on DAX, written with stores and fences (then the
 * files beside it are DAX too, and so is their mapping). */
bool sfs_oplog_dax(void);

/* 0 when the log can take records; otherwise why not (it could not be
 * made, the process is exiting: -ENOTSUP). */
int sfs_oplog_ready(void);

/* Logs a write of iov (n bytes) at off to the file lf (open at kfd, inode
 * number ino); size_after is the file's size after it. Its time (which
 * replay gives the file back: format.h, WRITE_TIMED) is now. Durable on return.
 * Caller holds the inode lock and calls sfs_oplog_done once the write is
 * applied. -E2BIG: larger than the log. */
int sfs_oplog_write(struct sfs_oplog_file *lf, int kfd, ino_t ino, const struct iovec *iov, int cnt,
		    size_t n, int64_t off, int64_t size_after);
/* The same for a file already bound in the log's generation, without the
 * inode lock (no record is written but the write's: its id and generation
 * are read, not made). -EAGAIN: not bound now, or a checkpoint moved the
 * generation meanwhile (no record counts then); the caller takes the lock
 * and calls sfs_oplog_write. */
int sfs_oplog_write_bound(struct sfs_oplog_file *lf, const struct iovec *iov, int cnt, size_t n,
			  int64_t off, int64_t size_after);
int sfs_oplog_truncate(struct sfs_oplog_file *lf, int kfd, ino_t ino, int64_t size);
void sfs_oplog_done(void);

/* Whether the log holds live records of the file: written in this
 * generation and not killed by a COMMIT (a checkpoint kills a generation's
 * records only after every file they cover is durable). Caller holds the
 * inode lock. */
bool sfs_oplog_live(const struct sfs_oplog_file *lf);

/* Makes the file's data durable: fdatasync of kfd. After a failed one
 * (the kernel reports a writeback error once, then 0 although the failed
 * pages never reached the media) the bytes of its live records are
 * written into it again first (rewrite.h); a sync that fails is tried
 * once more at once, after such a rewrite. 0, or the error (kept in
 * lf->wb_error). Caller holds the inode lock; no record of the file is
 * being written. */
int sfs_oplog_sync_file(struct sfs_oplog_file *lf, int kfd);

/* Makes the file durable (sfs_oplog_sync_file) and kills its records
 * (COMMIT). Caller holds the inode lock and has relinked the file's window
 * (fs/logged.h: sfs_inode_log_commit does both). */
int sfs_oplog_commit(struct sfs_oplog_file *lf, int kfd);

/* Process exit (final) or exec: every file durable, the log given back.
 * After a final close, writes go to their files durably, unlogged. */
void sfs_oplog_close(bool final);

/* A forked child: the parent's log is not its own. */
void sfs_oplog_reset_child(void);

#endif
