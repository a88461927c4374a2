/* SPDX-License-Identifier: Apache-2.0 */
/* Writes in sync and strict modes (oplog.h): the data is logged with one
 * synchronous write, then applied to the file's page cache; nothing is
 * staged. The caller holds the inode lock, but for
 * sfs_logged_overwrite_unlocked. */
#define _GNU_SOURCE
#include "logged.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/real.h"
#include "../oplog/oplog.h"
#include "../util/compiler.h"
#include "../util/guard.h"
#include "../util/msg.h"
#include "../util/stats.h"
#include "data.h"
#include "flush.h"
#include "inode.h"
#include "lease.h"
#include "share.h"

/* Sync mode sends writes this large straight to the file with fdatasync
 * (not atomic, which sync mode does not promise) instead of copying them
 * through the log. */
#define SYNC_DIRECT_MIN (256 << 10)

/* Sync mode: a file's first append is the kernel's durable write while the
 * log holds no record of it (append_direct). */
#define SYNC_DIRECT_APPENDS 1

/* A per-thread buffer: the data is read from the application once, under
 * the fault guard, so the logged bytes and the applied bytes are the same
 * even if the application changes its buffer meanwhile. */
static __thread char *tbuf __attribute__((tls_model("initial-exec")));
static __thread size_t tcap __attribute__((tls_model("initial-exec")));

static char *gather(const struct iovec *iov, int cnt, size_t n, int *err)
{
	if (n > tcap) {
		char *b = realloc(tbuf, n);
		if (!b) {
			*err = -ENOMEM;
			return NULL;
		}
		tbuf = b;
		tcap = n;
	}
	size_t at = 0;
	for (int i = 0; i < cnt && at < n; i++) {
		size_t len = SFS_MIN(iov[i].iov_len, n - at);
		if (sfs_guarded_copy(tbuf + at, iov[i].iov_base, len) != 0) {
			*err = -EFAULT;
			return NULL;
		}
		at += len;
	}
	return tbuf;
}

static void release(size_t n)
{
	if (n > (1u << 20)) { /* do not keep a big buffer per thread */
		free(tbuf);
		tbuf = NULL;
		tcap = 0;
	}
}

/* Writes n bytes at off on fd with the kernel's write (pwritev2 with
 * flags, pwrite without), again after a short count. Returns n, or what
 * the kernel took when it ran out of space part-way (a short count, as
 * write(2) returns), or -errno when it took nothing. */
static ssize_t write_at(int fd, const char *data, size_t n, int64_t off, int flags)
{
	size_t done = 0;
	while (done < n) {
		struct iovec v = {(char *)data + done, n - done};
		ssize_t w =
			flags ? SFS_REAL(pwritev2)(fd, &v, 1, off + (int64_t)done, flags) :
				SFS_REAL(pwrite)(fd, v.iov_base, v.iov_len, off + (int64_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return done ? (ssize_t)done : w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	return (ssize_t)n;
}

/* write_at on the library's descriptor; for a file that is not leased,
 * under the locks of its blocks, as every kernel write of such a file by
 * a library process (share.h: a store of another process's sharing
 * session does not mix with it, and its readers see it whole). */
static ssize_t write_kfd(struct sfs_inode *in, const char *data, size_t n, int64_t off, int flags)
{
	struct sfs_share_span sp;
	int locked = n && !sfs_inode_leased(in) ? sfs_share_lock(in->dev, in->ino, off, n, &sp) :
						  -ENOSYS;
	ssize_t w = write_at(in->kfd, data, n, off, flags);
	if (locked == 0)
		sfs_share_unlock(&sp);
	return w;
}

/* The sizes follow a write into the kernel's file that ended at end;
 * whether it grew the file. */
static bool grew_to(struct sfs_inode *in, int64_t end)
{
	if (end <= atomic_load(&in->ksize))
		return false;
	atomic_store(&in->ksize, end);
	atomic_store_explicit(&in->size, end, memory_order_release);
	return true;
}

/* write_kfd, and the sizes follow what it wrote. */
static ssize_t write_sized(struct sfs_inode *in, const char *data, size_t n, int64_t off, int flags)
{
	ssize_t w = write_kfd(in, data, n, off, flags);
	grew_to(in, off + SFS_MAX(w, (ssize_t)0));
	return w;
}

/* Puts the bytes into the file's page cache with pwrite: unlike a store
 * through a mapping, it dirties only the blocks it changes, and every
 * logged file is fsynced at the next checkpoint (see small_syncs in
 * inode.h).
 * On DAX there is no page cache: the write goes the POSIX mode's way, the
 * part inside the file stored through the mapping, an append into the
 * staging window, no system call. The record has the bytes until the
 * window is relinked and the file fsynced: at a close or truncation, by a
 * COMMIT (sfs_inode_log_commit relinks first), or by the checkpoint before it
 * kills the records (flush.c: sfs_relink_held). Returns what write_at
 * does. */
static ssize_t apply(struct sfs_inode *in, const char *data, size_t n, int64_t off)
{
	if (sfs_oplog_dax() && in->writable && sfs_inode_leased(in))
		return sfs_inode_write_locked(in, data, n, off);
	return write_sized(in, data, n, off, 0);
}

void sfs_strict_not_atomic(const char *what)
{
	static atomic_bool said;
	sfs_stat_event(SFS_EV_strict_not_atomic, 1);
	if (sfs_g.opt.verbose && !atomic_exchange(&said, true))
		sfs_msg("strict mode: %s is durable but not atomic (README, consistency modes; said "
			"once)",
			what);
}

/* Too big for the log (or a large sync-mode write): to the file, durably,
 * and the file's older records die, so replay cannot bring older bytes
 * back over these. */
static ssize_t direct(struct sfs_inode *in, const char *data, size_t n, int64_t off)
{
	if (sfs_g.opt.mode == SFS_MODE_STRICT && sfs_oplog_ready() == 0)
		sfs_strict_not_atomic("a write larger than the operation log (SPLITFS_LOG_SIZE)");
	bool grows = off + (int64_t)n > atomic_load(&in->ksize);
	ssize_t w = apply(in, data, n, off);
	if (w <= 0)
		return w;
	if (!grows)
		atomic_store(&in->dsync_untimed, true);
	in->log.logged = true;
	int rc = sfs_inode_log_commit(in); /* fdatasync, then COMMIT */
	return rc ? rc : w;
}

/* Sync mode: an overwrite inside the file of a file the log holds no live
 * record of is the kernel's own durable write (one pwritev2 with
 * RWF_DSYNC, as an O_DSYNC write): the log would write the bytes as a
 * record at the same cost (a device flush), and the page once more at the
 * next checkpoint (4 KiB O_DSYNC overwrites on the 16-core device: 0.82x
 * the kernel's rate with one thread, 0.38x with 16). No replay can bring
 * older bytes back over these: the file has no live records. Not strict
 * mode (not atomic), not on DAX (a record there is stores, no call). */
static bool overwrite_direct(const struct sfs_inode *in, size_t n, int64_t off)
{
	return sfs_g.opt.mode == SFS_MODE_SYNC && !sfs_oplog_dax() &&
	       off + (int64_t)n <= atomic_load(&in->ksize) && !sfs_oplog_live(&in->log);
}

/* Sync mode: an append to a file the log holds no live record of is the
 * kernel's own durable write too (RWF_DSYNC), for the file's first
 * SYNC_DIRECT_APPENDS appends. A logged file pays a FILE record at its
 * first record and an fdatasync and a COMMIT when it closes (about 300 us
 * here); a record costs about 50-60 us less than the kernel's durable
 * append (4 KiB: 75 against 126 us, 10 KiB: 118 against 175). So a file
 * written once and closed costs half as much this way (one 10 KiB write:
 * 556-614 us a file logged, 240-306 direct), and a file written more often
 * pays one kernel append more. More than one costs the files written a few
 * times more than it saves (quick utils in sync mode, medians of 4, in
 * seconds for none, 1, 2 and 4 direct appends: rsync 0.60, 0.46, 0.44,
 * 0.44; tar -x 0.68, 0.68, 0.75, 0.72; git add+commit 1.15, 1.13, 1.18,
 * 1.19). A later record's size is the file's, direct appends included. */
static bool append_direct(const struct sfs_inode *in, size_t n, int64_t off)
{
	return sfs_g.opt.mode == SFS_MODE_SYNC && !sfs_oplog_dax() &&
	       in->direct_appends < SYNC_DIRECT_APPENDS &&
	       off + (int64_t)n > atomic_load(&in->ksize) && !sfs_oplog_live(&in->log);
}

/* Sync mode, unlocked: overwrite_direct's write. No record may be live,
 * now that the stripes are ours: a record of these bytes logged before
 * (its writer set logged, then let the stripes go) would bring them back
 * over these at a replay; one logged after waits for the stripes and is
 * the newer. The flag alone, without the lock (a file whose records a
 * checkpoint killed takes the locked path until its next commit). */
static ssize_t direct_unlocked(struct sfs_inode *in, const void *buf, size_t n, int64_t off)
{
	if (atomic_load(&in->log.logged))
		return -EAGAIN;
	sfs_stat_event(SFS_EV_dsync_overwrites, 1);
	sfs_stat_event(SFS_EV_dsync_unlocked, 1);
	sfs_inode_kernel_changed(in);
	atomic_store(&in->dsync_untimed, true);
	/* The application's buffer as it is: a fault is the kernel's EFAULT or
	 * short count, as without the library. */
	return write_at(in->kfd, buf, n, off, RWF_DSYNC);
}

/* Strict mode, unlocked: the record (of a file bound in the log already,
 * sfs_oplog_write_bound), then the bytes into the page cache, as the
 * locked path makes them. Counted in this slot's logging meanwhile, so
 * that a commit (fdatasync, then COMMIT, which kills the record) waits
 * for the bytes to be in the file first (loggers_close). A failed or
 * short apply is handled under the lock, as the locked path does: the
 * record must not be replayed. */
static ssize_t logged_unlocked(struct sfs_inode *in, const void *buf, size_t n, int64_t off,
			       bool *failed)
{
	atomic_int *logging = &in->readers[sfs_reader_slot].logging;
	atomic_fetch_add(logging, 1);
	ssize_t w = -EAGAIN;
	if (atomic_load(&in->log_closing))
		goto out;
	int err = 0;
	struct iovec one = {(void *)buf, n};
	char *data = gather(&one, 1, n, &err);
	if (!data) /* a fault: the locked path writes what the kernel would */
		goto out;
	one.iov_base = data;
	if (sfs_oplog_write_bound(&in->log, &one, 1, n, off, atomic_load(&in->size)) != 0) {
		release(n);
		goto out; /* not bound now, no room, ...: the locked path decides */
	}
	w = write_at(in->kfd, data, n, off, 0);
	sfs_oplog_done();
	release(n);
	sfs_stat_event(SFS_EV_logged_unlocked, 1);
	*failed = w != (ssize_t)n;
out:
	atomic_fetch_sub(logging, 1);
	return w;
}

/* A commit's wait for the unlocked logged writes running (logged_unlocked);
 * new ones take the locked path meanwhile. Caller holds the inode lock. */
static void loggers_close(struct sfs_inode *in)
{
	atomic_store(&in->log_closing, 1);
	for (;;) {
		bool active = false;
		for (int i = 0; i < SFS_READER_SLOTS && !active; i++)
			active = atomic_load(&in->readers[i].logging) != 0;
		if (!active)
			return;
		sched_yield();
	}
}

ssize_t sfs_logged_overwrite_unlocked(struct sfs_inode *in, const void *buf, size_t n, int64_t off)
{
	if (n == 0 || n > SFS_UNLOCKED_WRITE_MAX ||
	    atomic_load_explicit(&sfs_g.fsize_limit, memory_order_relaxed) != RLIM_INFINITY)
		return -EAGAIN;
	/* The log open (its flag read with acquire) before its kind is read. */
	if (sfs_oplog_ready() != 0 || sfs_oplog_dax())
		return -EAGAIN;
	/* The read section keeps the file's shape and kfd still: no lease
	 * change, truncation, relink or swap of kfd meanwhile. */
	sfs_read_enter(in);
	int64_t end = off + (int64_t)n;
	if (!sfs_inode_leased(in) || !in->writable || end > atomic_load(&in->ksize) ||
	    atomic_load(&in->staged) || !sfs_ver_lock_try(&in->ver, off, n)) {
		sfs_read_exit(in);
		return -EAGAIN;
	}
	bool failed = false;
	ssize_t w = sfs_g.opt.mode == SFS_MODE_SYNC ? direct_unlocked(in, buf, n, off) :
						      logged_unlocked(in, buf, n, off, &failed);
	sfs_ver_unlock(&in->ver, off, n);
	sfs_read_exit(in);
	if (failed) {
		/* Strict: all or nothing; an overwrite of allocated blocks
		 * that fails part-way (EIO, a shared extent's ENOSPC) says so
		 * (the locked path's answer). Its record dies first. */
		sfs_inode_lock(in);
		atomic_store(&in->log.logged, true);
		sfs_inode_log_commit(in);
		sfs_inode_unlock(in);
		w = w > 0 ? -ENOSPC : w;
	}
	return w;
}

/* The application's buffer faulted part-way: the kernel writes what it can
 * read (a short write, or EFAULT), as it would without the library; then
 * that is made durable like a direct write. */
static ssize_t faulted(struct sfs_inode *in, const struct iovec *iov, int cnt, size_t n,
		       int64_t off)
{
	struct iovec small[16];
	struct iovec *v = cnt <= 16 ? small : malloc((size_t)cnt * sizeof(*v));
	if (!v)
		return -ENOMEM;
	int k = 0; /* the vector cut to n bytes (RLIMIT_FSIZE, MAX_RW_COUNT) */
	for (size_t left = n; k < cnt && left; k++) {
		v[k] = iov[k];
		v[k].iov_len = SFS_MIN(v[k].iov_len, left);
		left -= v[k].iov_len;
	}
	/* The kernel writes into the file: a DAX window goes in first. */
	ssize_t w = -1;
	int rc = atomic_load(&in->staged) ? sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE) : 0;
	if (rc)
		errno = -rc;
	else
		w = SFS_REAL(pwritev)(in->kfd, v, k, off);
	if (v != small)
		free(v);
	if (w <= 0)
		return w < 0 ? -errno : 0;
	if (!grew_to(in, off + w))
		atomic_store(&in->dsync_untimed, true);
	in->log.logged = true;
	rc = sfs_inode_log_commit(in);
	return rc ? rc : w;
}

ssize_t sfs_logged_pwritev(struct sfs_inode *in, const struct iovec *iov, int cnt, size_t n,
			   int64_t off)
{
	if (n == 0)
		return 0;
	int rc = 0;
	char *data = gather(iov, cnt, n, &rc);
	if (!data)
		return rc == -EFAULT ? faulted(in, iov, cnt, n, off) : rc;
	int64_t end = off + (int64_t)n;
	int64_t after = SFS_MAX(atomic_load(&in->size), end);
	ssize_t ret;
	struct iovec one = {data, n};
	int nolog = sfs_oplog_ready();
	if (nolog && nolog != -ENOTSUP && sfs_g.opt.mode == SFS_MODE_STRICT) {
		/* No log, no atomic write: the write fails, never weaker
		 * (the log is tried again a second later). */
		release(n);
		return nolog == -ENOSPC || nolog == -EDQUOT ? nolog : -EIO;
	}
	if (!nolog && overwrite_direct(in, n, off)) {
		sfs_stat_event(SFS_EV_dsync_overwrites, 1);
		atomic_store(&in->dsync_untimed, true);
		ret = write_kfd(in, data, n, off, RWF_DSYNC);
		release(n);
		return ret;
	}
	if (!nolog && append_direct(in, n, off)) {
		sfs_stat_event(SFS_EV_dsync_appends, 1);
		in->direct_appends++;
		ret = write_sized(in, data, n, off, RWF_DSYNC);
		release(n);
		return ret;
	}
	if (nolog || (sfs_g.opt.mode == SFS_MODE_SYNC && n >= SYNC_DIRECT_MIN))
		rc = -E2BIG; /* sync mode without a log, or a large write: durable, direct */
	else
		rc = sfs_oplog_write(&in->log, in->kfd, in->ino, &one, 1, n, off, after);
	if (rc == -E2BIG || rc == -ENOTSUP) { /* too big, or no log after all */
		ret = direct(in, data, n, off);
	} else if (rc) {
		ret = rc;
	} else {
		int64_t ksize = atomic_load(&in->ksize);
		ret = apply(in, data, n, off);
		sfs_oplog_done();
		if (ret != (ssize_t)n) {
			/* Failed or cut short (ENOSPC, EIO): the record must not be
			 * replayed. Strict mode writes all or nothing: what an
			 * append put in goes again (an overwrite of allocated
			 * blocks does not run out of space). */
			if (sfs_g.opt.mode == SFS_MODE_STRICT && ret > 0) {
				if (off + ret > ksize &&
				    SFS_REAL(ftruncate)(in->kfd, SFS_MAX(off, ksize)) == 0) {
					atomic_store(&in->ksize, SFS_MAX(off, ksize));
					atomic_store(&in->size, SFS_MAX(off, ksize));
				}
				ret = -ENOSPC;
			}
			in->log.logged = true;
			sfs_inode_log_commit(in);
		}
	}
	release(n);
	return ret;
}

int sfs_inode_log_commit(struct sfs_inode *in)
{
	if (!in->log.logged)
		return 0;
	/* A DAX window's bytes are only in the records: into the file first. */
	if (atomic_load(&in->staged)) {
		int rc = sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE);
		if (rc)
			return rc;
	}
	/* Records of unlocked writes die with the COMMIT too: their bytes
	 * must be in the file before the fdatasync. */
	loggers_close(in);
	int rc = sfs_oplog_commit(&in->log, in->kfd);
	atomic_store(&in->log_closing, 0);
	return rc;
}

/* *first_error: the first sync that failed (a writeback error), which
 * fails the checkpoint. A file whose fdatasync fails has its records
 * written into it again (oplog.h: sfs_oplog_sync_file), under its lock: a
 * write outside the log must not come between the read and the write
 * back. A lock another thread holds is not waited for (that thread may be
 * waiting for this checkpoint): the error stands, and the file's next sync
 * writes the records back. */
static void fsync_logged(struct sfs_inode *in, void *first_error)
{
	sfs_relink_for_checkpoint(in); /* a DAX window's bytes into the file */
	if (!in->log.logged)
		return;
	int failed = atomic_load(&in->log.wb_error);
	if (!failed && SFS_REAL(fdatasync)(in->kfd) == 0)
		return;
	if (!failed)
		atomic_store(&in->log.wb_error, -errno);
	int rc;
	if (sfs_inode_held_here(in)) { /* a checkpoint run by a write to in */
		rc = sfs_oplog_sync_file(&in->log, in->kfd);
	} else if (sfs_inode_trylock(in)) {
		rc = sfs_oplog_sync_file(&in->log, in->kfd);
		sfs_inode_unlock(in);
	} else {
		rc = atomic_load(&in->log.wb_error);
	}
	int *err = first_error;
	if (rc && *err == 0)
		*err = rc;
}

static int sync_logged_files(void)
{
	int err = 0;
	sfs_inode_foreach(fsync_logged, &err);
	return err;
}

const struct sfs_oplog_ops sfs_fs_oplog_ops = {
	.relink_held = sfs_relink_held,
	.sync_files = sync_logged_files,
};
