/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "flush.h"

#include <errno.h>
#include <sched.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/real.h"
#include "../relink/relink.h"
#include "../util/stats.h"
#include "lease.h"
#include "share.h"
#include "logged.h"
#include "logsync.h"
#include "process.h"
#include "../oplog/oplog.h"
#include "dax.h"
#include "ahead.h"
#include "data.h"

int sfs_relink(struct sfs_inode *in, bool durable)
{
	if (!atomic_load(&in->staged))
		return 0;
	uint64_t t0 = sfs_stat_start();
	int64_t base = atomic_load(&in->base);
	int64_t size = atomic_load(&in->size);
	struct sfs_relink_target t = {
		.kfd = in->kfd,
		.ksize = atomic_load(&in->ksize),
		.stage = &in->stage,
		.dax = sfs_inode_on_dax(in),
	};
	const struct sfs_relink_ops *ops = sfs_relink_choose(&t, base, size, durable);
	int rc = sfs_relink_check(&t);
	if (rc)
		return rc;
	/* The blocks this relink allocates come out of the reservation the
	 * staged appends took (staging/reserve.h). */
	sfs_inode_unreserve_locked(in);
	rc = sfs_relink_commit(ops, &t, base, size, t0);
	if (rc)
		return rc;
	atomic_store(&in->ksize, size);
	atomic_store(&in->staged, false);
	sfs_inode_staged_changed(-1);
	return 0;
}

int sfs_inode_flush_locked(struct sfs_inode *in, enum sfs_flush how)
{
	if (!atomic_load(&in->staged))
		return 0;
	sfs_inode_kernel_changed(in);
	sfs_barrier_close(in);
	int rc = sfs_relink(in, how == SFS_FLUSH_DURABLE);
	sfs_barrier_open(in);
	return rc;
}

int sfs_inode_flush(struct sfs_inode *in, enum sfs_flush how)
{
	if (!atomic_load(&in->staged))
		return 0;
	sfs_inode_lock(in);
	int rc = sfs_inode_flush_locked(in, how);
	sfs_inode_unlock(in);
	return rc;
}

/* The kernel's fsync or fdatasync of fd, or of kfd where fd is -1: in a
 * read section then, so that a swap of kfd (install_rdwr, which closes the
 * barrier first) waits for it and never closes it under the sync. */
static int kernel_sync(struct sfs_inode *in, int fd, bool datasync)
{
	bool own = fd < 0;
	if (own) {
		sfs_read_enter(in);
		fd = in->kfd;
	}
	int rc = (datasync ? SFS_REAL(fdatasync)(fd) : SFS_REAL(fsync)(fd)) == 0 ? 0 : -errno;
	if (own)
		sfs_read_exit(in);
	return rc;
}

void sfs_inode_synced_by_app(struct sfs_inode *in)
{
	/* The application syncs this file: on DAX its stores will be flushed
	 * from now on (inode.h), with primitives learnt in the background. */
	if (in->dax && !atomic_load_explicit(&in->fsynced, memory_order_relaxed)) {
		atomic_store_explicit(&in->fsynced, true, memory_order_relaxed);
		sfs_inode_dax_learn(in); /* ready, most likely, by the next store */
	}
}

/* What the writes since the last sync say about the next ones: small_syncs
 * and small_appends (inode.h). Also for a file that is not leased, whose
 * overwrites may be stores (a sharing session, share.h). */
static void learn_from_writes(struct sfs_inode *in)
{
	/* small_syncs (inode.h) when the mapping's worst case, every run of
	 * overwrites dirtying a whole 2 MiB folio at each end, would write
	 * back more than four times what was overwritten. */
	int64_t ow = atomic_exchange_explicit(&in->overwritten, 0, memory_order_relaxed);
	int64_t runs = atomic_exchange_explicit(&in->overwrite_runs, 0, memory_order_relaxed);
	for (int i = 0; i < SFS_READER_SLOTS; i++) {
		ow += atomic_exchange_explicit(&in->readers[i].overwritten, 0,
					       memory_order_relaxed);
		runs += atomic_exchange_explicit(&in->readers[i].runs, 0, memory_order_relaxed);
	}
	if (ow > 0) {
		int64_t worst = ow + (runs + 1) * (4 << 20); /* + the epoch's first run */
		atomic_store_explicit(&in->small_syncs, worst > 4 * ow, memory_order_relaxed);
	}
	int64_t appended = atomic_exchange_explicit(&in->appended, 0, memory_order_relaxed);
	if (appended > 0)
		atomic_store_explicit(&in->small_appends, appended <= SFS_SMALL_APPENDS,
				      memory_order_relaxed);
}

int sfs_inode_sync(struct sfs_inode *in, int fd, bool datasync)
{
	sfs_inode_synced_by_app(in);
	if (!sfs_oplog_on())
		learn_from_writes(in);
	/* A file that is not leased has nothing staged: the kernel's fsync. */
	if (!sfs_inode_leased(in))
		return kernel_sync(in, fd, datasync);
	/* Sync/strict: every write was durable when it returned. A DAX window
	 * (logged.c) is relinked, not synced (its bytes are in the log): one
	 * write, and the overwrites that follow are stores into the file. */
	if (sfs_oplog_on()) {
		int rc = sfs_inode_flush(in, SFS_FLUSH_VISIBLE);
		/* An fsync makes the times durable too: a record carries its
		 * write's, the kernel's durable write does not (inode.h). */
		if (!rc && !datasync && atomic_exchange(&in->dsync_untimed, false) &&
		    SFS_REAL(fsync)(in->kfd) != 0) {
			rc = -errno;
			atomic_store(&in->dsync_untimed, true);
		}
		return rc;
	}
	/* POSIX mode on DAX (inode.h): once the file is synced, every store
	 * is flushed and fenced before its write returns (data.c), and MAP_SYNC
	 * made the blocks' metadata durable at the write fault; with nothing
	 * staged, nothing only the kernel's fsync makes durable (kdirty: also
	 * every store before this first sync) and no metadata call since the
	 * last kernel fsync, there is nothing to do. */
	if (in->dax && atomic_load(&in->maps.sync) && !atomic_load(&in->staged) &&
	    !atomic_load(&in->kdirty) && (datasync || sfs_inode_meta_synced(in))) {
		sfs_stat_event(SFS_EV_dax_syncs, 1);
		return 0;
	}
	/* POSIX mode: a file that only grew a little since its last sync is
	 * made durable by one write into the log (logsync.h). */
	if (sfs_logsync_try(in, datasync))
		return 0;
	int64_t covered;
	int rc = sfs_logsync_kernel_begin(in, &covered); /* relinks durably */
	if (rc)
		return rc;
	/* Outside the inode lock: writers need not wait for the device. What
	 * the kernel changes from here on marks the inode kdirty again. */
	atomic_store(&in->kdirty, false);
	uint64_t meta = atomic_load(&sfs_meta_epoch);
	rc = sfs_logsync_kernel_end(in, covered, datasync, kernel_sync(in, fd, datasync));
	if (rc) {
		sfs_inode_kernel_changed(in);
		return rc;
	}
	if (!datasync) /* a racing fsync may store an older one: harmless */
		atomic_store(&in->synced_meta, meta);
	/* Writeback made the target's pages clean (write-protected) again. */
	sfs_write_ahead_reset(in);
	return 0;
}

int sfs_inode_truncate(struct sfs_inode *in, int fd, const char *path, int64_t len)
{
	sfs_inode_lock(in);
	/* A truncate(2) of the path would break this process's own lease and
	 * wait for the service thread, which waits for this lock: the lease
	 * goes first unless the library's descriptor can truncate. */
	if (sfs_inode_leased(in) && fd < 0 && !in->kwritable)
		sfs_lease_drop_locked(in);
	if (!sfs_inode_leased(in)) {
		/* Sync and strict: the kernel zeroes the tail of the new last
		 * block before the new size is in its journal (on DAX straight
		 * on the media), so a crash in between would leave neither
		 * state. The TRUNCATE record goes first (recovery redoes it)
		 * and is retired once the kernel's truncation is durable. */
		bool logged =
			sfs_oplog_on() && sfs_oplog_truncate(&in->log, in->kfd, in->ino, len) == 0;
		/* Under the lock of the new last block, which a store of another
		 * library process looks the size up under (share.h): no store
		 * lands past the new end in that block, where it would be lost
		 * (a store into a page past it faults, and is the kernel's). */
		struct sfs_share_span sp;
		int locked = len >= 0 ? sfs_share_lock(in->dev, in->ino, len, 1, &sp) : -ENOSYS;
		int r = (fd >= 0 ? SFS_REAL(ftruncate)(fd, len) : SFS_REAL(truncate)(path, len)) ==
					0 ?
				0 :
				-errno;
		if (locked == 0)
			sfs_share_unlock(&sp);
		if (logged) { /* durable (its fdatasync), or refused: not to be replayed */
			int c = sfs_inode_log_commit(in);
			if (!r)
				r = c;
		} else if (!r && sfs_oplog_on() && SFS_REAL(fdatasync)(in->kfd) != 0) {
			r = -errno;
		}
		sfs_inode_kernel_changed(in);
		sfs_logsync_changed(in);
		sfs_inode_unlock(in);
		return r;
	}
	if (fd < 0)
		fd = in->kfd; /* the same file: no path lookup, no lease break */
	sfs_barrier_close(in);
	/* A readv's pieces see the file before it or after it, not both. */
	sfs_ver_lock(&in->ver, 0, SFS_VER_ALL);
	int rc = sfs_relink(in, false);
	/* Sync and strict modes log it first (write-ahead): a replay must never
	 * run this file's older records over a truncation it does not know. */
	bool logged = false;
	if (!rc && sfs_oplog_on()) {
		rc = sfs_oplog_truncate(&in->log, in->kfd, in->ino, len);
		logged = rc == 0;
		if (rc == -ENOTSUP) /* no log after all: synced below instead */
			rc = 0;
	}
	if (!rc && SFS_REAL(ftruncate)(fd, len) != 0) {
		rc = -errno;
		if (logged) /* refused: the record must not be replayed */
			sfs_inode_log_commit(in);
	}
	if (!rc) {
		sfs_inode_kernel_changed(in);
		sfs_logsync_changed(in);
		atomic_store(&in->ksize, len);
		atomic_store(&in->size, len);
		if (sfs_oplog_on() && !logged && SFS_REAL(fdatasync)(in->kfd) != 0)
			rc = -errno;
	}
	sfs_ver_unlock(&in->ver, 0, SFS_VER_ALL);
	sfs_barrier_open(in);
	sfs_inode_unlock(in);
	return rc;
}

/* Sync/strict modes on DAX stage appends (logged.c): a window's bytes are
 * in the log's records, not yet in the file. A checkpoint, which kills the
 * records, first relinks every window (sfs_relink_for_checkpoint), taking
 * each inode's lock. So that it never waits for a lock whose holder waits
 * for the log, a thread relinks the windows of the inodes it holds before
 * it waits for the log (sfs_relink_held): then a window still open is
 * either unlocked or its holder is not waiting for the log, and lets go. */
static void relink_locked(struct sfs_inode *in)
{
	if (atomic_load(&in->staged))
		sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE);
}

void sfs_relink_held(void)
{
	struct sfs_inode *mine[4];
	int n = sfs_inode_held(mine, 4);
	for (int i = 0; i < n; i++)
		relink_locked(mine[i]);
}

/* A window this process must still relink. */
static bool window_open(const struct sfs_inode *in)
{
	return atomic_load(&in->staged);
}

void sfs_relink_for_checkpoint(struct sfs_inode *in)
{
	if (sfs_inode_held_here(in)) {
		relink_locked(in);
		return;
	}
	while (window_open(in)) {
		if (sfs_inode_trylock(in)) {
			relink_locked(in);
			sfs_inode_unlock(in);
			return;
		}
		sched_yield();
	}
}

static void flush_one(struct sfs_inode *in, void *unused)
{
	(void)unused;
	sfs_inode_flush(in, SFS_FLUSH_VISIBLE);
}

void sfs_flush_all(void)
{
	if (sfs_inode_staged_count() > 0)
		sfs_inode_foreach(flush_one, NULL);
}

static void flush_nowait(struct sfs_inode *in)
{
	if (!atomic_load(&in->staged) || !sfs_inode_trylock(in))
		return;
	if (!sfs_readers_active(in)) {
		sfs_barrier_close(in);
		if (sfs_relink(in, false) == 0)
			sfs_stage_unbind(&in->stage);
		sfs_barrier_open(in);
	}
	sfs_inode_unlock(in);
}

void sfs_flush_before_exit(void)
{
	if (!sfs_live())
		return;
	if (sfs_inode_staged_count() > 0)
		sfs_inode_foreach_nowait(flush_nowait);
	sfs_stage_unpark_all(); /* relinked windows' stores, and the pool's */
}
