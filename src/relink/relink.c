/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "relink.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/real.h"
#include "../sys/statq.h"
#include "../util/msg.h"
#include "../util/stats.h"

/* In auto mode, windows up to this size are copied, also for fsync. Measured
 * on page-cache XFS (loop on /dev/shm, 10 x 4 KiB appends per fsync, median
 * of runs): write()+fsync 15 us/op, staging + pwrite + fdatasync 12-19 us/op,
 * staging + exchange + fsync 26-38 us/op: the exchange writes the staged
 * pages back and logs its intents, so it costs more than the plain copy it
 * saves. In auto mode every store is a ring (staging/stage.c), which only a
 * copy can move, so the limit matters where a backend is forced
 * (SPLITFS_RELINK=exchange|clone, file stores): windows relinked only to be
 * seen are copied up to this size; a relink for an fsync uses the forced
 * backend whatever the size. */
#define CHEAP_COPY_MAX (1 << 20)

/* The backend for durable relinks: starts from the option (auto starts at
 * exchange) and steps down exchange -> clone -> copy when the file system
 * says the backend is not supported. Per process, decided by the first
 * relink that needs it. */
static _Atomic(const struct sfs_relink_ops *) chosen;
static atomic_bool proven; /* the chosen backend has worked once */

static const struct sfs_relink_ops *initial(void)
{
	switch (sfs_g.opt.relink) {
	case SFS_RELINK_CLONE:
		return &sfs_relink_clone;
	case SFS_RELINK_COPY:
		return &sfs_relink_copy;
	default:
		return &sfs_relink_exchange;
	}
}

static const struct sfs_relink_ops *current_ops(void)
{
	const struct sfs_relink_ops *ops = atomic_load(&chosen);
	if (!ops) {
		const struct sfs_relink_ops *expect = NULL;
		ops = initial();
		if (!atomic_compare_exchange_strong(&chosen, &expect, ops))
			ops = expect;
	}
	return ops;
}

const char *sfs_relink_backend_name(void)
{
	return current_ops()->name;
}

static bool unsupported(int rc)
{
	return rc == -EOPNOTSUPP || rc == -ENOTTY || rc == -EXDEV || rc == -EINVAL;
}

static const struct sfs_relink_ops *step_down(const struct sfs_relink_ops *ops, int rc)
{
	const struct sfs_relink_ops *next =
		ops == &sfs_relink_exchange ? &sfs_relink_clone : &sfs_relink_copy;
	bool forced = sfs_g.opt.relink != SFS_RELINK_AUTO;
	if (!atomic_load(&proven)) {
		/* The first attempt failed: the file system cannot do it. */
		if (forced || sfs_g.opt.verbose)
			sfs_warn("relink backend '%s' does not work on %s (%s); using '%s'",
				 ops->name, sfs_g.opt.root, strerror(-rc), next->name);
		const struct sfs_relink_ops *expect = ops;
		atomic_compare_exchange_strong(&chosen, &expect, next);
	} else {
		sfs_warn("relink backend '%s' failed once (%s); copying this window", ops->name,
			 strerror(-rc));
		next = &sfs_relink_copy;
	}
	return next;
}

static void count(const struct sfs_relink_ops *ops, int64_t bytes, uint64_t t0)
{
	enum sfs_event ev = ops == &sfs_relink_exchange ? SFS_EV_relink_exchange :
			    ops == &sfs_relink_clone	? SFS_EV_relink_clone :
							  SFS_EV_relink_copy;
	sfs_stat_event(ev, 1);
	sfs_stat_event(SFS_EV_relink_bytes, (uint64_t)bytes);
	if (sfs_stats_on)
		sfs_stat_event(SFS_EV_relink_ns, sfs_now_ns() - t0);
}

const struct sfs_relink_ops *sfs_relink_choose(const struct sfs_relink_target *t, int64_t base,
					       int64_t size, bool durable)
{
	const struct sfs_relink_ops *ops = current_ops();
	if (t->stage->kind == SFS_STAGE_RING ||
	    (size - base <= CHEAP_COPY_MAX && (!durable || sfs_g.opt.relink == SFS_RELINK_AUTO)))
		ops = &sfs_relink_copy; /* a ring can only be copied */
	return ops;
}

int sfs_relink_check(const struct sfs_relink_target *t)
{
	/* The lease keeps every other user out (fs/lease.h), but the kernel
	 * takes a lease back after lease-break-time even if the holder did not
	 * let go: never write the window over a change made since. The window
	 * stays in its store, which recovery keeps as an orphan. */
	struct stat st;
	if (sfs_fstat_quiet(t->kfd, &st) == 0 && st.st_size != t->ksize) {
		sfs_error("a file was changed by another process while this one had appends "
			  "staged for it (size %lld, expected %lld): they are not written over "
			  "the change; they stay in .splitfs for `splitfs recover`",
			  (long long)st.st_size, (long long)t->ksize);
		return -EIO;
	}
	return 0;
}

int sfs_relink_cut_store(const struct sfs_relink_target *t, int64_t size)
{
	if (t->stage->kind != SFS_STAGE_FILE)
		return -EOPNOTSUPP;
	int64_t send = sfs_stage_file_offset(t->stage, size);
	if (SFS_REAL(ftruncate)(t->stage->fd, send) != 0)
		return -errno;
	t->stage->cap = send;
	return 0;
}

int sfs_relink_commit(const struct sfs_relink_ops *ops, const struct sfs_relink_target *t,
		      int64_t base, int64_t size, uint64_t t0)
{
	sfs_stage_relinking(t->stage); /* before its first write (adopt.c) */
	int rc = ops->commit(t, base, size);
	while (rc && unsupported(rc) && ops != &sfs_relink_copy) {
		ops = step_down(ops, rc);
		rc = ops->commit(t, base, size);
	}
	if (rc)
		return rc;
	sfs_stage_empty(t->stage);
	if (ops != &sfs_relink_copy)
		atomic_store(&proven, true);
	count(ops, size - base, t0);
	return 0;
}
