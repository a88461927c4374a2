/* SPDX-License-Identifier: Apache-2.0 */
/* The write path: stores through the target's mappings (overwrites of
 * different stripes at once, without the inode lock), appends into the
 * staging window, the kernel where neither can serve. Reads: read.c. */
#define _GNU_SOURCE
#include "data.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../map/protect.h"
#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/guard.h"
#include "../util/msg.h"
#include "../util/pmem.h"
#include "../staging/pool.h"
#include "../staging/reserve.h"
#include "../util/stats.h"
#include "ahead.h"
#include "flush.h"
#include "mapcopy.h"
#include "openfile.h"
#include "lease.h"
#include "logsync.h"
#include "logged.h"
#include "../oplog/oplog.h"
#include "dax.h"
#include "share.h"
#include "sharewrite.h"

/* Opens a staging window at the target's end of file. A ring's window
 * starts right there (relink copies); a file store's starts at the block
 * that holds the end, whose bytes [base, ksize) are copied in first, so the
 * whole window relinks as whole blocks. The store is bound to the file
 * first (stage.h): from now on what the window holds outlives the process.
 * Caller holds the lock. */
static int open_window(struct sfs_inode *in)
{
	int rc = sfs_stage_attach(&in->stage);
	if (rc)
		return rc;
	int64_t ksize = atomic_load(&in->ksize);
	int64_t base = in->stage.kind == SFS_STAGE_FILE ?
			       SFS_ALIGN_DOWN(ksize, (int64_t)SFS_BLOCK) :
			       ksize;
	rc = sfs_stage_open_window(&in->stage, in->kfd, in->dev, in->ino, ksize);
	if (!rc)
		rc = sfs_stage_cover(&in->stage, base, ksize);
	if (rc)
		return rc;
	if (ksize > base) {
		char head[SFS_BLOCK];
		ssize_t r = SFS_REAL(pread)(in->kfd, head, (size_t)(ksize - base), base);
		if (r != ksize - base)
			return r < 0 ? -errno : -EIO;
		rc = sfs_stage_xfer(&in->stage, base, head, (size_t)r, 1);
		if (rc)
			return rc;
	}
	atomic_store(&in->base, base);
	atomic_store_explicit(&in->staged, true, memory_order_release);
	sfs_inode_staged_changed(1);
	sfs_stat_event(SFS_EV_staging_windows, 1);
	return 0;
}

/* A window takes space from the process's reservation this much at a time
 * (its spare covers the next appends without the reservation's lock, which
 * every appending thread would otherwise take per block). When the file
 * system cannot spare that much, exactly what the write needs. */
#define RESERVE_BATCH (64 << 10)

/* Space for the bytes an append adds to the window (staging/reserve.h):
 * the blocks past the file's current end it will need at relink. */
static int reserve(struct sfs_inode *in, int64_t end)
{
	int64_t have = SFS_ALIGN_UP(atomic_load(&in->size), (int64_t)SFS_BLOCK);
	int64_t need = SFS_ALIGN_UP(end, (int64_t)SFS_BLOCK) - have;
	if (need <= 0)
		return 0;
	if (need <= in->reserve_spare) {
		in->reserve_spare -= need;
		return 0;
	}
	need -= in->reserve_spare;
	/* The window's reservation comes from one shard, which gets it all
	 * back: the shard of the thread that opened it. */
	if (in->reserved == 0)
		in->reserve_shard = sfs_my_reader_slot();
	int64_t take = SFS_MAX(need, (int64_t)RESERVE_BATCH);
	int rc = sfs_reserve_take(in->reserve_shard, take);
	if (rc && take > need)
		rc = sfs_reserve_take(in->reserve_shard, take = need);
	if (rc)
		return rc;
	in->reserved += take;
	in->reserve_spare = take - need;
	return 0;
}

void sfs_inode_unreserve_locked(struct sfs_inode *in)
{
	sfs_reserve_give(in->reserve_shard, in->reserved);
	in->reserved = 0;
	in->reserve_spare = 0;
}

/* Writes [off, off+n), all at or past the boundary, into the window, opening
 * one if needed. -ENOSPC: the window cannot hold it (the caller relinks and
 * retries once); *full then says whether the file system had no space for
 * it (a store, or the reservation). -EAGAIN: the write leaves a hole, which
 * the kernel makes (holes stay holes: SEEK_HOLE, du, cp --sparse see what
 * they would). Caller holds lock. */
static int stage_write(struct sfs_inode *in, const char *buf, size_t n, int64_t off, bool *full)
{
	int64_t end = off + (int64_t)n;
	int64_t size = atomic_load(&in->size);
	if (off > size)
		return -EAGAIN;
	int rc = atomic_load(&in->staged) ? 0 : open_window(in);
	*full = rc == -ENOSPC;
	if (!rc)
		rc = sfs_stage_cover(&in->stage, atomic_load(&in->base), end);
	if (!rc)
		*full = (rc = reserve(in, end)) == -ENOSPC;
	if (!rc)
		rc = sfs_stage_xfer(&in->stage, off, (char *)buf, n, 1);
	if (rc)
		return rc;
	sfs_stat_event(SFS_EV_staged_bytes, n);
	/* The kernel would have updated mtime now; stat reports this until the
	 * relink updates the file itself (coarse clock, as the kernel uses). */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME_COARSE, &now);
	atomic_store_explicit(&in->staged_mtime, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
			      memory_order_relaxed);
	if (end > size) {
		sfs_stage_acknowledge(&in->stage, end); /* what a recovery puts back */
		atomic_store_explicit(&in->size, end, memory_order_release);
	}
	return 0;
}

/* pwrite on the library's descriptor, with nothing staged; the sizes
 * follow a write past the end. Caller holds lock. */
static ssize_t pwrite_kfd(struct sfs_inode *in, const void *buf, size_t n, int64_t off)
{
	sfs_inode_kernel_changed(in);
	ssize_t w = SFS_REAL(pwrite)(in->kfd, buf, n, off);
	if (w < 0)
		return -errno;
	if (off + w > atomic_load(&in->ksize)) {
		atomic_store(&in->ksize, off + w);
		atomic_store(&in->size, off + w);
	}
	return w;
}

/* The kernel's answer to a write: relink what is staged, then pwrite on the
 * library's descriptor. Caller holds lock. */
static ssize_t kernel_pwrite(struct sfs_inode *in, const void *buf, size_t n, int64_t off)
{
	sfs_stat_event(SFS_EV_kernel_fallbacks, 1);
	int rc = sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE);
	return rc ? rc : pwrite_kfd(in, buf, n, off);
}

/* An overwrite (below the staging window) with pwrite, so that only the
 * blocks it changes are dirty (see small_syncs in inode.h). 0 or -errno. */
static int overwrite_kernel(struct sfs_inode *in, const void *buf, size_t n, int64_t off)
{
	sfs_stat_event(SFS_EV_kernel_overwrites, 1);
	sfs_inode_kernel_changed(in);
	for (size_t done = 0; done < n;) {
		ssize_t w = SFS_REAL(pwrite)(in->kfd, (const char *)buf + done, n - done,
					     off + (int64_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	return 0;
}

/* Appends at least this large, with nothing staged, are the kernel's: its
 * one copy into the page cache beats staging them and copying them again
 * at the relink (64 MiB by dd, staged: bs=1M 1.6x the kernel's time, bs=64k
 * 1.3x, bs=4k 0.3x). */
#define BIG_APPEND (64 << 10)

/* Such an append at off (at or past the end: a hole is the kernel's to
 * make anyway) with pwrite on the library's descriptor. Caller holds lock. */
static ssize_t append_kernel(struct sfs_inode *in, const void *buf, size_t n, int64_t off)
{
	sfs_stat_event(SFS_EV_kernel_appends, 1);
	return pwrite_kfd(in, buf, n, off);
}

/* One write at off; caller holds lock. */
static ssize_t write_locked(struct sfs_inode *in, const void *buf, size_t n, int64_t off)
{
	if (n == 0)
		return 0;
	if ((int64_t)n > INT64_MAX - off)
		return -EFBIG;
	int64_t end = off + (int64_t)n;
	/* Not writable through the library, or staging switched off and the
	 * write extends the file: the kernel writes it. */
	if (!in->writable || (!sfs_g.opt.staging && end > atomic_load(&in->size)))
		return kernel_pwrite(in, buf, n, off);
	bool sequential = off == atomic_load_explicit(&in->wr_next, memory_order_relaxed);
	atomic_store_explicit(&in->wr_next, end, memory_order_relaxed);
	int64_t size = atomic_load(&in->size);
	if (end > size) {
		int64_t grown = end - SFS_MAX(off, size);
		int64_t since =
			atomic_fetch_add_explicit(&in->appended, grown, memory_order_relaxed) +
			grown;
		if (off >= size && !atomic_load(&in->staged) &&
		    (n >= BIG_APPEND ||
		     (atomic_load_explicit(&in->small_appends, memory_order_relaxed) &&
		      since <= SFS_SMALL_APPENDS)))
			return append_kernel(in, buf, n, off);
	}
	int rc = 0;
	for (int attempt = 0; attempt < 2; attempt++) {
		int64_t boundary = sfs_inode_boundary(in);
		size_t low = off < boundary ? (size_t)(SFS_MIN(end, boundary) - off) : 0;
		if (low) {
			atomic_fetch_add_explicit(&in->overwritten, (int64_t)low,
						  memory_order_relaxed);
			if (!sequential)
				atomic_fetch_add_explicit(&in->overwrite_runs, 1,
							  memory_order_relaxed);
		}
		/* Stores into clean pages take write faults (ahead.c), unless on
		 * DAX, where a store dirties only the lines it flushes. */
		bool faults = low && !sfs_inode_on_dax(in) && !sfs_g.opt.protect &&
			      atomic_load_explicit(&in->maps_rw, memory_order_relaxed);
		if (low && !in->dax &&
		    (atomic_load_explicit(&in->small_syncs, memory_order_relaxed) ||
		     (faults && sfs_write_by_kernel(in, off, low, sequential)))) {
			rc = overwrite_kernel(in, buf, low, off);
		} else if (low) {
			if (faults) {
				if (sequential)
					sfs_write_ahead(in, off, off + (int64_t)low, boundary);
				else
					sfs_write_scattered(in, off, boundary);
			}
			rc = sfs_map_write(in, off, buf, low);
			if (!rc && sfs_inode_on_dax(in)) /* stores on DAX */
				sfs_stat_event(SFS_EV_dax_stores, low);
		}
		bool full = false;
		if (!rc && end > boundary)
			rc = stage_write(in, (const char *)buf + low, n - low, off + (int64_t)low,
					 &full);
		if (full && attempt > 0) {
			/* Even a new window finds no space: the file system is
			 * full. The stores that hold no staged byte give theirs
			 * back (this file's window is relinked, so its store is
			 * one), and the kernel writes: its ENOSPC, or the bytes
			 * in the space that frees. */
			if (sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE) == 0) {
				sfs_inode_unreserve_locked(in);
				sfs_stage_detach(&in->stage);
				sfs_staging_release_pool();
			}
		}
		if (rc != -ENOSPC || attempt > 0)
			break;
		/* The window is full: relink it and write again into a new one
		 * (the boundary moved; rewriting the part below it is harmless). */
		rc = sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE);
		if (rc)
			break;
	}
	return rc ? kernel_pwrite(in, buf, n, off) : (ssize_t)n;
}

ssize_t sfs_inode_write_locked(struct sfs_inode *in, const void *buf, size_t n, int64_t off)
{
	return write_locked(in, buf, n, off);
}

/* RLIMIT_FSIZE, as the kernel's generic_write_check_limits: at or past the
 * limit, SIGXFSZ to the calling thread and EFBIG; across it, a short write.
 * Returns the count allowed or -EFBIG. */
static ssize_t fsize_check(int64_t off, size_t n)
{
	uint64_t lim = atomic_load_explicit(&sfs_g.fsize_limit, memory_order_relaxed);
	if (lim == RLIM_INFINITY || n == 0)
		return (ssize_t)n;
	if ((uint64_t)off >= lim)
		return -EFBIG; /* the caller raises SIGXFSZ once the lock is let go */
	return (ssize_t)SFS_MIN((uint64_t)n, lim - (uint64_t)off);
}

/* The kernel sends SIGXFSZ as its write returns: here once the inode lock
 * is let go, so that a default action that ends the process finds every
 * earlier write ready to go into the file (util/signals.h). */
static void raise_xfsz(void)
{
	pthread_kill(pthread_self(), SIGXFSZ);
}

/* A write to a file that is not leased: the kernel's, at off or (append)
 * at the kernel's end of file, atomically, as an O_APPEND write would be.
 * In sync and strict modes it is durable before it returns (not atomic:
 * the log serves leased files only). Caller holds the lock. */
static ssize_t unleased_pwritev(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off,
				bool append, int64_t *at)
{
	sfs_stat_event(SFS_EV_unleased_ops, 1);
	if (!append) { /* at off, not where O_APPEND would put it */
		int rc = sfs_openfile_drop_append(in);
		if (rc)
			return rc;
	}
	/* Strict mode: logged, applied, synced and retired at once, so that
	 * the write is atomic after a crash, and no replay can come after
	 * what another user of the file writes next. (An append's offset is
	 * the kernel's to choose, at the moment it writes: not logged.) */
	int nolog = sfs_g.opt.mode == SFS_MODE_STRICT && !append ? sfs_oplog_ready() : 0;
	if (nolog && nolog != -ENOTSUP) /* no log, no atomic write: it fails, never weaker */
		return nolog == -ENOSPC || nolog == -EDQUOT ? nolog : -EIO;
	if (sfs_g.opt.mode == SFS_MODE_STRICT && !append && !nolog) {
		size_t n = (size_t)sfs_iov_total(iov, cnt);
		*at = off;
		ssize_t w = sfs_logged_pwritev(in, iov, cnt, SFS_MIN(n, SFS_MAX_RW_COUNT), off);
		if (w > 0 && in->log.logged) {
			int rc = sfs_inode_log_commit(in);
			if (rc)
				return rc;
		}
		return w;
	}
	/* Sync and strict modes: durable as it returns, with the write itself
	 * (RWF_DSYNC: one device flush, not a write and an fdatasync). */
	int dsync = sfs_oplog_on() ? RWF_DSYNC : 0;
	ssize_t w;
	if (append) {
		/* Offset -1: at the open file's position, which an append moves
		 * to the new end of file (the application's own offset lives in
		 * its struct sfs_file). */
		w = SFS_REAL(pwritev2)(in->kfd, iov, cnt, -1, RWF_APPEND | dsync);
		int64_t end = w > 0 ? SFS_REAL(lseek)(in->kfd, 0, SEEK_CUR) : -1;
		*at = end >= 0 ? end - w : off;
	} else {
		/* Under the locks of its blocks: a read of another library
		 * process sees it whole, and a store of a sharing session does
		 * not mix with it (share.h). */
		uint64_t total = sfs_iov_total(iov, cnt);
		struct sfs_share_span sp;
		int locked = total ? sfs_share_lock(in->dev, in->ino, off, total, &sp) : -ENOSYS;
		w = dsync ? SFS_REAL(pwritev2)(in->kfd, iov, cnt, off, dsync) :
			    SFS_REAL(pwritev)(in->kfd, iov, cnt, off);
		int err = errno;
		if (locked == 0)
			sfs_share_unlock(&sp);
		errno = err;
		*at = off;
	}
	if (w < 0)
		return -errno;
	sfs_inode_kernel_changed(in);
	if (w > 0 && dsync && sfs_g.opt.mode == SFS_MODE_STRICT)
		sfs_strict_not_atomic("an O_APPEND write to a file another process has open");
	return w;
}

/* Takes the lock for a write and the lease if the file may have one;
 * false: not leased, the kernel writes. */
static bool lock_for_write(struct sfs_inode *in)
{
	sfs_inode_lock(in);
	/* Sync and strict modes log every write of a leased file: lease it
	 * at once (a write of an unleased file is durable, not atomic). */
	return sfs_lease_take_locked(in, sfs_oplog_on());
}

/* A POSIX-mode overwrite of bytes the file already has, on a leased file
 * outside DAX, by a random writer: stores through the mappings under the
 * locks of its stripes only (versions.h), so writers of different parts of
 * one file run at once (KucoFS's two-level locking: the file's lock for
 * what changes its shape, stripes for its bytes). The read section keeps
 * the shape still: no relink, truncation or lease change meanwhile. Whoever
 * reads or writes the target's bytes under the inode lock alone (the
 * kernel_preadv fallback) takes the stripes too.
 * -EAGAIN: not such a write, or a stripe is busy: the locked path. */
static ssize_t overwrite_unlocked(struct sfs_inode *in, const void *buf, size_t n, int64_t off)
{
	if (n == 0 || n > SFS_UNLOCKED_WRITE_MAX || sfs_oplog_on() ||
	    off == atomic_load_explicit(&in->wr_next, memory_order_relaxed) ||
	    atomic_load_explicit(&sfs_g.fsize_limit, memory_order_relaxed) != RLIM_INFINITY)
		return -EAGAIN;
	sfs_read_enter(in);
	int64_t end = off + (int64_t)n;
	/* Whole blocks below the boundary only: the block that holds the
	 * kernel's end of file is copied into a new window's head under the
	 * inode lock (open_window), which must not miss a store. */
	int64_t boundary = SFS_ALIGN_DOWN(sfs_inode_boundary(in), (int64_t)SFS_BLOCK);
	/* dax and writable change before a lease is taken (widen), and only
	 * under the lock with no lease: read once the lease is seen. A file
	 * whose syncs the log serves is written under the lock (logsync.h). */
	if (!sfs_inode_leased(in) || in->dax || !in->writable || end > boundary ||
	    atomic_load(&in->logsync)) {
		sfs_read_exit(in);
		return -EAGAIN;
	}
	if (!sfs_ver_lock_try(&in->ver, off, n)) {
		sfs_read_exit(in);
		return -EAGAIN;
	}
	/* A pwrite rather than stores (write_locked's choice): a file synced
	 * often in small writes, or pages of 4 KiB folios not written since
	 * the last writeback (marked written here, the stripes held, so that
	 * this write makes the pwrite it marks). Under the stripes and the
	 * read section too: the kernel's descriptor stays (no swap, relink or
	 * lease change), and a lock-free reader of the range sees the whole
	 * write or none of it. */
	bool by_kernel = atomic_load_explicit(&in->small_syncs, memory_order_relaxed) ||
			 (!sfs_g.opt.protect && sfs_write_by_kernel(in, off, n, false));
	if (!by_kernel && !atomic_load_explicit(&in->maps_rw, memory_order_relaxed)) {
		sfs_ver_unlock(&in->ver, off, n);
		sfs_read_exit(in);
		return -EAGAIN;
	}
	__typeof__(in->readers[0]) *slot = &in->readers[sfs_reader_slot];
	atomic_fetch_add_explicit(&slot->overwritten, (int64_t)n, memory_order_relaxed);
	/* A sequential run (one that began away from wr_next, which the locked
	 * path serves) counts once. */
	bool run = atomic_exchange_explicit(&slot->next, end, memory_order_relaxed) == off;
	if (!run)
		atomic_fetch_add_explicit(&slot->runs, 1, memory_order_relaxed);
	if (by_kernel) {
		int rc = overwrite_kernel(in, buf, n, off);
		sfs_ver_unlock(&in->ver, off, n);
		sfs_read_exit(in);
		return rc ? -EAGAIN : (ssize_t)n; /* the locked path redoes it */
	}
	/* A run's pages, or a scattered write's chunk, are prepared so that
	 * its stores fault whole folios writable, not 4 KiB pages (a clean
	 * page is write-protected after each writeback). */
	if (!sfs_g.opt.protect) {
		if (run)
			sfs_write_ahead(in, off, end, boundary);
		else
			sfs_write_scattered(in, off, boundary);
	}
	int rc = sfs_map_write(in, off, buf, n);
	sfs_ver_unlock(&in->ver, off, n);
	sfs_read_exit(in);
	return rc ? -EAGAIN : (ssize_t)n; /* a fault: the locked path redoes it */
}

ssize_t sfs_inode_pwrite(struct sfs_inode *in, const void *buf, size_t n, int64_t off, bool append,
			 int64_t *at)
{
	if (!append) {
		ssize_t w = sfs_oplog_on() ? sfs_logged_overwrite_unlocked(in, buf, n, off) :
					     overwrite_unlocked(in, buf, n, off);
		if (w == -EAGAIN && atomic_load_explicit(&in->share, memory_order_relaxed))
			w = sfs_share_overwrite(in, buf, n, off);
		if (w != -EAGAIN) {
			*at = off;
			return w;
		}
	}
	if (!lock_for_write(in) || !in->writable) {
		if (!append)
			sfs_share_maybe_locked(in);
		struct iovec one = {(void *)buf, SFS_MIN(n, SFS_MAX_RW_COUNT)};
		ssize_t r = unleased_pwritev(in, &one, 1, off, append, at);
		sfs_inode_unlock(in);
		return r;
	}
	sfs_logsync_wrote(in, off, append);
	if (append)
		off = atomic_load(&in->size);
	*at = off;
	ssize_t r = fsize_check(off, SFS_MIN(n, SFS_MAX_RW_COUNT));
	bool over = r == -EFBIG;
	uint64_t span = r > 0 ? (uint64_t)r : 0;
	sfs_ver_lock(&in->ver, off, span);
	if (r > 0 && sfs_oplog_on()) {
		struct iovec one = {(void *)buf, (size_t)r};
		r = sfs_logged_pwritev(in, &one, 1, (size_t)r, off);
	} else if (r > 0) {
		r = write_locked(in, buf, (size_t)r, off);
	}
	sfs_ver_unlock(&in->ver, off, span);
	sfs_inode_unlock(in);
	if (over)
		raise_xfsz();
	return r;
}

ssize_t sfs_inode_pwritev(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off,
			  bool append, int64_t *at)
{
	if (!lock_for_write(in) || !in->writable) {
		ssize_t r = unleased_pwritev(in, iov, cnt, off, append, at);
		sfs_inode_unlock(in);
		return r;
	}
	sfs_logsync_wrote(in, off, append);
	if (append)
		off = atomic_load(&in->size);
	*at = off;
	size_t total = (size_t)sfs_iov_total(iov, cnt); /* import_iov clamped it to MAX_RW_COUNT */
	ssize_t allowed = fsize_check(off, total);
	if (allowed <= 0 || sfs_oplog_on()) {
		/* One record for the whole vector: writev is atomic in strict mode. */
		bool over = allowed == -EFBIG;
		if (allowed > 0) {
			sfs_ver_lock(&in->ver, off, (uint64_t)allowed);
			ssize_t w = sfs_logged_pwritev(in, iov, cnt, (size_t)allowed, off);
			sfs_ver_unlock(&in->ver, off, (uint64_t)allowed);
			allowed = w;
		}
		sfs_inode_unlock(in);
		if (over)
			raise_xfsz();
		return allowed;
	}
	/* Readers see the whole vector or none of it. */
	sfs_ver_lock(&in->ver, off, (uint64_t)allowed);
	ssize_t done = 0;
	for (int i = 0; i < cnt && done < allowed; i++) {
		size_t len = SFS_MIN(iov[i].iov_len, (size_t)(allowed - done));
		ssize_t r = write_locked(in, iov[i].iov_base, len, off + done);
		if (r < 0) {
			if (done == 0)
				done = r;
			break;
		}
		done += r;
		if ((size_t)r < len || (size_t)done >= SFS_MAX_RW_COUNT)
			break;
	}
	sfs_ver_unlock(&in->ver, off, (uint64_t)allowed);
	sfs_inode_unlock(in);
	return done;
}
