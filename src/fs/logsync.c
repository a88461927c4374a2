/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "logsync.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "../oplog/oplog.h"
#include "../sys/global.h"
#include "../sys/real.h"
#include "../util/stats.h"
#include "dax.h"
#include "flush.h"
#include "lease.h"
#include "logged.h"

/* What the file must be for the log to serve its syncs (logsync.h). */
static bool servable(struct sfs_inode *in)
{
	return !atomic_load(&in->dax) && in->writable && sfs_inode_leased(in) &&
	       !atomic_load(&in->share) && !atomic_load(&in->unseen);
}

/* The bytes [from, to) of the file into one record, whose time (which
 * replay gives the file back: a moment after its last write's) is now. Not
 * the file's own, read with fstat: a look at it makes the kernel give the
 * next write a new fine-grained time, one more transaction (9% on
 * walsync's records). 0, or why not. */
static int log_range(struct sfs_inode *in, int64_t from, int64_t to)
{
	size_t n = (size_t)(to - from);
	char *buf = n ? malloc(n) : NULL;
	if (n && !buf)
		return -ENOMEM;
	int rc = n && SFS_REAL(pread)(in->kfd, buf, n, from) != (ssize_t)n ? -EIO : 0;
	struct iovec v = {buf, n};
	if (!rc)
		rc = sfs_oplog_write(&in->log, in->kfd, in->ino, &v, 1, n, from, to);
	if (!rc) {
		sfs_oplog_done(); /* applied already: the page cache has them */
		atomic_store(&in->log.logged, true);
		in->untimed = false;
	}
	free(buf);
	return rc;
}

bool sfs_logsync_try(struct sfs_inode *in, bool datasync)
{
	if (!atomic_load_explicit(&in->logsync, memory_order_relaxed))
		return false;
	/* An fsync makes a metadata call's change durable too: none since the
	 * file's last kernel fsync, or the kernel's. */
	if (!datasync && !sfs_inode_meta_synced(in))
		return false;
	bool served = false;
	sfs_inode_lock(in);
	/* Not while a kernel sync runs: durable_end counts it done. */
	if (!atomic_load(&in->logsync) || in->ksyncs || atomic_load(&in->other_dirty) ||
	    !servable(in) || sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE) != 0)
		goto out;
	int64_t from = atomic_load(&in->durable_end), to = atomic_load(&in->size);
	if (from < 0 || to < from || to - from > SFS_LOGSYNC_MAX)
		goto out;
	/* Nothing appended: an fsync after the kernel's fdatasync writes the
	 * time still (a record of no bytes). */
	if (to == from && (datasync || !in->untimed)) {
		sfs_stat_event(SFS_EV_log_syncs_empty, 1);
		served = true;
	} else if (log_range(in, from, to) == 0) {
		atomic_store(&in->durable_end, to);
		sfs_stat_event(SFS_EV_log_syncs, 1);
		served = true;
	}
out:
	sfs_inode_unlock(in);
	return served;
}

int sfs_logsync_kernel_begin(struct sfs_inode *in, int64_t *covered)
{
	*covered = -1;
	sfs_inode_lock(in);
	/* Under the lock: no append comes between the relink and the size
	 * the sync is noted to cover. */
	int rc = sfs_inode_flush_locked(in, SFS_FLUSH_DURABLE);
	if (rc)
		goto out;
	if (!atomic_load(&in->logsync)) {
		bool small = servable(in) && atomic_load(&in->small_appends);
		in->streak = small ? in->streak + 1 : 0;
		if (!small || in->streak < SFS_LOGSYNC_STREAK || !sfs_g.opt.logsync)
			goto out;
		/* Overwrites without the lock are out before it is on, and take
		 * the locked path (sfs_logsync_wrote) after. */
		sfs_barrier_close(in);
		atomic_store(&in->logsync, true);
		sfs_barrier_open(in);
		atomic_fetch_add(&sfs_logsync_files, 1);
	}
	atomic_store(&in->other_dirty, false);
	*covered = atomic_load(&in->size);
	atomic_store(&in->durable_end, *covered);
	in->ksyncs++;
out:
	sfs_inode_unlock(in);
	return rc;
}

int sfs_logsync_kernel_end(struct sfs_inode *in, int64_t covered, bool datasync, int rc)
{
	if (covered < 0 && !atomic_load(&in->log.logged))
		return rc;
	sfs_inode_lock(in);
	if (covered >= 0) {
		in->ksyncs--;
		if (rc)
			atomic_store(&in->other_dirty, true);
		else /* only fsync promises the file's times */
			in->untimed = datasync;
	}
	/* Durable in the file now: its records must not be replayed over
	 * what is written after this sync. */
	if (!rc && atomic_load(&in->log.logged))
		rc = sfs_inode_log_commit(in);
	sfs_inode_unlock(in);
	return rc;
}

SFS_HOT atomic_int sfs_logsync_files;

void sfs_logsync_off_locked(struct sfs_inode *in)
{
	if (atomic_exchange(&in->logsync, false))
		atomic_fetch_sub(&sfs_logsync_files, 1);
	atomic_store(&in->durable_end, -1);
	in->streak = 0;
}
