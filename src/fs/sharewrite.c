/* SPDX-License-Identifier: Apache-2.0 */
/* The write path of a sharing session (share.h): POSIX-mode overwrites of a
 * file another library process of the user has open too, stored through
 * this process's mapping. */
#define _GNU_SOURCE
#include "sharewrite.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "../sys/global.h"
#include "../sys/statq.h"
#include "../util/clock.h"
#include "../util/stats.h"
#include "ahead.h"
#include "data.h"
#include "lease.h"
#include "mapcopy.h"
#include "share.h"

/* A POSIX-mode overwrite of a file another library process of the user has
 * open too (not leased), in a sharing session (share.h): a store through
 * this process's mapping, under the locks of its blocks in the user's
 * table (other processes) and of its stripes (this process's readers once
 * the file is leased again), at bytes below the kernel's end of file,
 * looked up under those locks (a truncation by another library process
 * holds the lock of its new last block; a store past the end faults, and
 * the kernel writes instead). -EAGAIN: not such a write, or it faulted:
 * the kernel's write. */
ssize_t sfs_share_overwrite(struct sfs_inode *in, const void *buf, size_t n, int64_t off)
{
	static __thread unsigned stores;
	if (n == 0 || n > SFS_UNLOCKED_WRITE_MAX ||
	    atomic_load_explicit(&sfs_g.fsize_limit, memory_order_relaxed) != RLIM_INFINITY)
		return -EAGAIN;
	/* Now and then the lease again (outside the read section: taking it
	 * may wait for readers): the other process may be gone (a child that
	 * exited, a reader that closed), and a leased file's stores need no
	 * lock of another process nor a look at the size. */
	if ((++stores & 63) == 0 && sfs_lease_try(in, true))
		return -EAGAIN; /* leased now: the caller's locked path */
	sfs_read_enter(in);
	if (sfs_inode_leased(in) || !atomic_load_explicit(&in->share, memory_order_acquire) ||
	    !sfs_share_storing() || atomic_load_explicit(&in->small_syncs, memory_order_relaxed) ||
	    !sfs_ver_lock_try(&in->ver, off, n)) {
		sfs_read_exit(in);
		return -EAGAIN;
	}
	struct sfs_share_span sp;
	int rc = sfs_share_lock(in->dev, in->ino, off, n, &sp);
	struct stat st;
	if (!rc && (sfs_fstat_quiet(in->kfd, &st) != 0 || off + (int64_t)n > st.st_size))
		rc = -EAGAIN;
	if (!rc) {
		/* Counted and prepared as overwrite_unlocked counts
		 * (small_syncs) and prepares (ahead.c). */
		__typeof__(in->readers[0]) *slot = &in->readers[sfs_reader_slot];
		atomic_fetch_add_explicit(&slot->overwritten, (int64_t)n, memory_order_relaxed);
		if (atomic_exchange_explicit(&slot->next, off + (int64_t)n, memory_order_relaxed) !=
		    off) {
			atomic_fetch_add_explicit(&slot->runs, 1, memory_order_relaxed);
			sfs_write_scattered(in, off, st.st_size);
		} else {
			sfs_write_ahead(in, off, off + (int64_t)n, st.st_size);
		}
		rc = sfs_map_copy(in, off, (char *)buf, n, true);
		if (!rc)
			sfs_stat_event(SFS_EV_share_stores, 1);
	}
	if (rc != -ENOSYS)
		sfs_share_unlock(&sp);
	sfs_ver_unlock(&in->ver, off, n);
	sfs_read_exit(in);
	return rc ? -EAGAIN : (ssize_t)n; /* a fault: the kernel writes it all */
}

/* Before a POSIX-mode overwrite of a file that is not leased: a sharing
 * session if the file may have one (share.h), so that the next overwrites
 * are stores. The file's owner is the process's user and nobody else may
 * write it: other users' processes would not take the user's locks.
 * Caller holds the lock. */
void sfs_share_maybe_locked(struct sfs_inode *in)
{
	if (atomic_load(&in->share) || in->share_never || sfs_g.opt.mode != SFS_MODE_POSIX ||
	    !sfs_g.opt.share || in->dax || !in->writable || sfs_g.opt.protect ||
	    !atomic_load(&in->maps_rw) || sfs_coarse_ns() < in->share_retry_at)
		return;
	struct stat st;
	if (sfs_fstat_quiet(in->kfd, &st) != 0 || st.st_uid != sfs_g.euid ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		in->share_never = true;
		return;
	}
	if (sfs_share_session_begin(in->dev, in->ino)) {
		atomic_store_explicit(&in->share, true, memory_order_release);
		sfs_stat_event(SFS_EV_share_sessions, 1);
	} else {
		in->share_retry_at = sfs_coarse_ns() + 10 * 1000 * 1000;
	}
}

void sfs_inode_share_end_locked(struct sfs_inode *in)
{
	if (atomic_load(&in->share)) {
		atomic_store(&in->share, false);
		sfs_share_session_end(in->dev, in->ino);
	}
}
