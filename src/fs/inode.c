/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "inode.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../map/protect.h"
#include "../sys/global.h"
#include "../sys/self.h"
#include "../sys/real.h"
#include "../oplog/oplog.h"
#include "../staging/pool.h"
#include "../sys/statq.h"
#include "../util/compiler.h"
#include "../util/msg.h"
#include "ahead.h"
#include "coldwrite.h"
#include "flush.h"
#include "fdtable.h"
#include "file.h"
#include "lease.h"
#include "logged.h"
#include "openfile.h"
#include "../util/signals.h"
#include "dax.h"
#include "kernel_files.h"
#include "data.h"
#include "sharewrite.h"

#define NBUCKETS 4096
#define CACHE_MAX 32 /* closed inodes kept with their mappings (paper §3.5) */

SFS_HOT static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sfs_inode *buckets[NBUCKETS];
/* Inodes in the buckets (under the table lock): the walks of the whole
 * table stop when they have seen them all, and touch no bucket when there
 * is none (a process's exit: 32 KiB of zero pages faulted in for nothing). */
SFS_HOT static atomic_int nhashed;
/* The closed inodes, most recently closed first (under the table lock). A
 * list with ends rather than a ring around a head inode: no relocation to
 * apply, and no page of a 12 KiB head to copy, at each process start. */
SFS_HOT static struct sfs_inode *lru_first, *lru_last;
SFS_HOT static int ncached;
SFS_HOT static atomic_int nstaged;
/* Inodes out of the table whose destroy has not finished: their descriptors
 * are still open, and while they are, the kernel refuses a lease on the
 * same file to a new inode object (lease.c waits: sfs_inode_wait_destroyed).
 * Under the table lock. */
SFS_HOT static int ndestroying;
SFS_HOT static pthread_cond_t destroyed = PTHREAD_COND_INITIALIZER;

/* --- table --------------------------------------------------------------- */

static unsigned hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev;
	return (unsigned)(h >> 40) % NBUCKETS;
}

static struct sfs_inode *lookup_locked(dev_t dev, ino_t ino)
{
	for (struct sfs_inode *in = buckets[hash(dev, ino)]; in; in = in->hnext)
		if (in->dev == dev && in->ino == ino)
			return in;
	return NULL;
}

static void lru_unlink(struct sfs_inode *in)
{
	*(in->lru_prev ? &in->lru_prev->lru_next : &lru_first) = in->lru_next;
	*(in->lru_next ? &in->lru_next->lru_prev : &lru_last) = in->lru_prev;
	in->lru_prev = in->lru_next = NULL;
	ncached--;
}

static void lru_push(struct sfs_inode *in)
{
	in->lru_prev = NULL;
	in->lru_next = lru_first;
	*(lru_first ? &lru_first->lru_prev : &lru_last) = in;
	lru_first = in;
	ncached++;
}

static void unhash_locked(struct sfs_inode *in)
{
	struct sfs_inode **pp = &buckets[hash(in->dev, in->ino)];
	while (*pp != in)
		pp = &(*pp)->hnext;
	*pp = in->hnext;
	nhashed--;
}

/* Closes one of the library's descriptors of the file, unless the process
 * may hold POSIX locks on it through any descriptor (the application's may
 * be open still, left to the kernel): the close would drop them all, so
 * the descriptor stays open, hidden, until the process ends. */
static void close_kfd(struct sfs_inode *in, int fd)
{
	if (fd >= 0 && !atomic_load(&in->posix_locks) && !sfs_posix_locked(in->dev, in->ino))
		sfs_internal_close(fd);
}

/* Frees an inode no one refers to. Called without the table lock. */
static void destroy(struct sfs_inode *in)
{
	sfs_inode_lock(in);
	/* Sync/strict: its records die with it (a later inode object of the
	 * same file binds a new id, and replay must not run these after that
	 * one's). */
	sfs_lease_drop_locked(in);
	if (in->log.logged)
		sfs_inode_log_commit(in);
	sfs_inode_unreserve_locked(in);
	sfs_inode_share_end_locked(in);
	sfs_inode_unlock(in);
	if (atomic_load(&in->staged))
		sfs_inode_staged_changed(-1);
	sfs_map_drop_all(&in->maps);
	sfs_write_ahead_free(in);
	sfs_cold_write_free(in);
	sfs_stage_detach(&in->stage);
	close_kfd(in, in->kfd);
	close_kfd(in, in->stale_kfd);
	pthread_mutex_destroy(&in->lock);
	free(in);
}

/* A cached (closed) inode leaves the table, for destroy_counted after the
 * table lock is released. */
static void evict_locked(struct sfs_inode *in)
{
	lru_unlink(in);
	unhash_locked(in);
	ndestroying++;
}

/* destroy() of an inode counted in ndestroying when it left the table. */
static void destroy_counted(struct sfs_inode *in)
{
	destroy(in);
	sfs_mutex_lock(&table_lock);
	if (--ndestroying == 0)
		pthread_cond_broadcast(&destroyed);
	sfs_mutex_unlock(&table_lock);
}

/* destroy_counted() of each inode of a list chained through hnext. */
static void destroy_list(struct sfs_inode *victims)
{
	while (victims) {
		struct sfs_inode *next = victims->hnext;
		destroy_counted(victims);
		victims = next;
	}
}

bool sfs_inode_wait_destroyed(void)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1; /* bounded: a signal handler may interrupt a destroy */
	sfs_mutex_lock(&table_lock);
	bool any = ndestroying > 0;
	while (ndestroying > 0 && pthread_cond_timedwait(&destroyed, &table_lock, &until) == 0)
		;
	sfs_mutex_unlock(&table_lock);
	return any;
}

static struct sfs_inode *create(int appfd, const struct stat *st, int flags, int cloexec)
{
	bool locks = sfs_posix_locked(st->st_dev, st->st_ino);
	bool mergeable, widen;
	bool writable = sfs_openfile_prepare(appfd, flags, cloexec, locks, &widen, &mergeable);
	int kfd = sfs_internal_dup(appfd);
	if (kfd < 0)
		return NULL;
	sfs_fd_set_internal(kfd, true);
	/* aligned: the version counters sit on their own cache lines */
	struct sfs_inode *in = aligned_alloc(_Alignof(struct sfs_inode), sizeof(*in));
	if (in)
		memset(in, 0, sizeof(*in));
	if (!in) {
		sfs_internal_close(kfd);
		return NULL;
	}
	sfs_signals_arm(); /* a fatal signal flushes what it will hold */
	in->dev = st->st_dev;
	in->ino = st->st_ino;
	in->kfd = kfd;
	in->writable = writable;
	/* flags are the open file's own (the open's, or F_GETFL's) */
	in->readable = writable || (flags & O_ACCMODE) != O_WRONLY;
	in->kwritable = sfs_openfile_writes(flags);
	in->widen = widen;
	in->kappend = widen && (flags & O_APPEND);
	/* A writer the library cannot write for (no read access, an
	 * append-only file) is the kernel's for good. */
	in->lease_never = in->kwritable && !writable && !widen;
	in->mergeable = mergeable;
	pthread_mutex_init(&in->lock, NULL);
	atomic_store(&in->ksize, st->st_size);
	atomic_store(&in->size, st->st_size);
	in->stage.fd = in->stage.hfd = -1;
	in->stale_kfd = -1;
	atomic_store(&in->wr_next, -1);
	atomic_store(&in->durable_end, -1);
	atomic_store(&in->posix_locks, locks);
	in->refs = 1;
	in->nwriters = sfs_openfile_writes(flags) ? 1 : 0;
	atomic_store(&in->maps_rw,
		     in->writable && in->nwriters > 0 && (!sfs_g.opt.protect || sfs_pkey >= 0));
	sfs_inode_dax_setup(in);
	atomic_store(&in->kdirty, true);
	return in;
}

/* An existing inode opened again (or taken from the cache). The new open
 * shares the inode's open file when it can (one open file per process and
 * file, so a lease is possible); otherwise the inode stays unleased while
 * both exist. Returns false when the file cannot be managed. */
static bool reuse(struct sfs_inode *in, int appfd, int flags, int cloexec, int64_t opened_size,
		  bool from_cache, bool *shared)
{
	bool locks = atomic_load(&in->posix_locks) || sfs_posix_locked(in->dev, in->ino);
	sfs_inode_lock(in);
	/* Our own open broke the lease (the service thread let it go), or the
	 * kernel path serves the file from now on anyway. */
	sfs_lease_drop_locked(in);
	bool ok = true;
	bool reads = (flags & O_ACCMODE) != O_WRONLY;
	*shared = false;
	/* A reader shares only a readable open file; another writer may share
	 * the write-only one until it is widened. */
	if (in->widen && reads && !locks)
		sfs_openfile_widen(in);
	if (locks) {
		in->mergeable = false;
	} else if (in->mergeable && !sfs_openfile_writes(flags) && in->readable) {
		/* A reader keeps its own open file for now: reads go through
		 * kfd anyway, and the lease, if the file earns one, merges it
		 * first (sfs_openfile_merge). A dup3 and the close of an open
		 * file fewer for every reopen of a file read a few times. */
		in->apart = true;
	} else if (in->mergeable && (in->writable || in->widen || !sfs_openfile_writes(flags))) {
		/* An open without O_APPEND shares an open file that appends
		 * the writes the library does not see only once it no longer
		 * does (in->kappend). */
		if ((flags & O_APPEND) || sfs_openfile_drop_append(in) == 0)
			*shared = sfs_openfile_replace(in->kfd, appfd, cloexec) == 0;
		in->mergeable = *shared;
	} else if (in->mergeable) {
		*shared = sfs_openfile_upgrade(in, appfd, flags);
		in->mergeable = *shared;
	}
	/* An open the inode's descriptor cannot serve (a writer of a file
	 * whose open file is read-only, a reader of a write-only one) that
	 * could not share or take over the open file: the kernel serves the
	 * file (the caller leaves it to the kernel). */
	if ((sfs_openfile_writes(flags) && !in->kwritable) || (reads && !in->readable))
		ok = false;
	if (ok && sfs_openfile_writes(flags)) {
		in->nwriters++;
		sfs_inode_maps_follow_writers(in);
	}
	if (ok && (flags & O_TRUNC) && atomic_load(&in->staged)) {
		/* The kernel already truncated the file: staged bytes are gone. */
		sfs_barrier_close(in);
		atomic_store(&in->staged, false);
		sfs_inode_staged_changed(-1);
		sfs_stage_empty(&in->stage);
		sfs_inode_unreserve_locked(in);
		sfs_barrier_open(in);
	}
	/* Coming out of the cache, or truncated by this open: the kernel's
	 * size is the truth (another process may have changed the file). The
	 * caller's fstat, taken before the lock, is enough when it shows the
	 * size the inode has: a relink or truncation of ours since would have
	 * changed ksize (resync_locked says why the size is read under the
	 * lock). In POSIX mode the sizes of an unleased inode (as every one is
	 * here, after the drop above) serve nothing, and a lease reads the
	 * kernel's when it is taken: no fstat for a file that is only read
	 * (a file written through the kernel has stale sizes). Sync and strict
	 * modes log the unleased writes, with the size. */
	if (ok && (from_cache || (flags & O_TRUNC))) {
		sfs_inode_kernel_changed(in);
		if (sfs_oplog_on() &&
		    (atomic_load(&in->staged) || atomic_load(&in->ksize) != opened_size ||
		     atomic_load(&in->size) != opened_size))
			sfs_inode_resync_locked(in);
	}
	sfs_inode_unlock(in);
	return ok;
}

void sfs_inode_writer_gone(struct sfs_inode *in)
{
	sfs_inode_lock(in);
	in->nwriters--;
	sfs_inode_maps_follow_writers(in);
	sfs_inode_unlock(in);
}

void sfs_inode_maps_follow_writers(struct sfs_inode *in)
{
	bool rw = in->writable && in->nwriters > 0 && (!sfs_g.opt.protect || sfs_pkey >= 0);
	if (rw == atomic_load(&in->maps_rw))
		return;
	sfs_barrier_close(in);
	atomic_store(&in->maps_rw, rw);
	/* On DAX writable chunks must be MAP_SYNC (maptab.h), which only a
	 * new mapping gets: mapped again on the next touch. */
	if (in->dax || sfs_map_protect_all(&in->maps, PROT_READ | (rw ? PROT_WRITE : 0)) != 0)
		sfs_map_drop_all(&in->maps);
	sfs_barrier_open(in);
}

/* Closed inodes still holding a writable descriptor (evicted soon). */
SFS_HOT static atomic_bool idle_writable;

void sfs_inode_evict_writable(void)
{
	/* A look first: the exchange would write its page in every child. */
	if (!atomic_load(&idle_writable) || !atomic_exchange(&idle_writable, false))
		return;
	struct sfs_inode *victims = NULL;
	sfs_mutex_lock(&table_lock);
	for (struct sfs_inode *in = lru_first, *next; in; in = next) {
		next = in->lru_next;
		if (!in->writable && !in->kwritable)
			continue;
		evict_locked(in);
		in->hnext = victims;
		victims = in;
	}
	sfs_mutex_unlock(&table_lock);
	destroy_list(victims);
}

int sfs_inode_evict_cached(void)
{
	struct sfs_inode *victims = NULL;
	int n = 0;
	sfs_mutex_lock(&table_lock);
	while (lru_first) {
		struct sfs_inode *in = lru_first;
		evict_locked(in);
		in->hnext = victims;
		victims = in;
		n++;
	}
	sfs_mutex_unlock(&table_lock);
	destroy_list(victims);
	return n;
}

struct sfs_inode *sfs_inode_open(int appfd, const struct stat *st, int flags, int cloexec,
				 bool *shared)
{
	sfs_mutex_lock(&table_lock);
	struct sfs_inode *in = lookup_locked(st->st_dev, st->st_ino);
	if (in) {
		bool from_cache = in->refs++ == 0;
		if (from_cache)
			lru_unlink(in);
		sfs_mutex_unlock(&table_lock);
		if (!reuse(in, appfd, flags, cloexec, st->st_size, from_cache, shared)) {
			sfs_inode_put(in);
			return NULL;
		}
		return in;
	}
	sfs_mutex_unlock(&table_lock);

	struct sfs_inode *fresh = create(appfd, st, flags, cloexec);
	if (!fresh)
		return NULL;
	*shared = true;
	sfs_mutex_lock(&table_lock);
	in = lookup_locked(st->st_dev, st->st_ino);
	if (!in) {
		unsigned h = hash(fresh->dev, fresh->ino);
		fresh->hnext = buckets[h];
		buckets[h] = fresh;
		nhashed++;
		sfs_mutex_unlock(&table_lock);
		return fresh;
	}
	/* Another thread created it first: use theirs. */
	bool from_cache = in->refs++ == 0;
	if (from_cache)
		lru_unlink(in);
	sfs_mutex_unlock(&table_lock);
	destroy(fresh);
	if (!reuse(in, appfd, flags, cloexec, st->st_size, from_cache, shared)) {
		sfs_inode_put(in);
		return NULL;
	}
	return in;
}

struct sfs_inode *sfs_inode_find(dev_t dev, ino_t ino)
{
	sfs_mutex_lock(&table_lock);
	struct sfs_inode *in = lookup_locked(dev, ino);
	if (in && in->refs++ == 0)
		lru_unlink(in);
	sfs_mutex_unlock(&table_lock);
	return in;
}

void sfs_inode_set_kfd(struct sfs_inode *in, int kfd)
{
	/* sfs_inode_find_kfd reads it under the table lock; the caller holds
	 * the inode lock, which nothing takes under the table lock but with
	 * a trylock (sfs_inode_foreach_nowait). */
	sfs_mutex_lock(&table_lock);
	in->kfd = kfd;
	sfs_mutex_unlock(&table_lock);
}

struct sfs_inode *sfs_inode_find_kfd(int fd)
{
	sfs_mutex_lock(&table_lock);
	struct sfs_inode *found = NULL;
	int seen = 0;
	for (int b = 0; b < NBUCKETS && seen < nhashed && !found; b++)
		for (struct sfs_inode *in = buckets[b]; in && !found; in = in->hnext, seen++)
			if (in->kfd == fd)
				found = in;
	if (found && found->refs++ == 0)
		lru_unlink(found);
	sfs_mutex_unlock(&table_lock);
	return found;
}

int sfs_inode_app_fds(struct sfs_inode *in, int *out, int max)
{
	int n = 0, limit = sfs_fd_limit();
	for (int fd = 0; fd < limit; fd++) {
		struct sfs_file *f = sfs_fd_get(fd);
		if (!f)
			continue;
		if (f->inode == in) {
			if (n < max)
				out[n] = fd;
			n++;
		}
		sfs_file_put(f);
	}
	return n;
}

/* The last application file of the inode closes (its window relinked by
 * the close): the lease goes (a closed file must not keep others waiting,
 * and the next open of it breaks a lease anyway) and, in sync and strict
 * modes, the file's log records (were it evicted later, in the background,
 * a new inode object for the same file could change it meanwhile under
 * another log id, and a crash before the eviction would replay the old
 * records over that). */
static void release_if_last(struct sfs_inode *in)
{
	if (!sfs_inode_leased(in) && !in->log.logged)
		return;
	sfs_mutex_lock(&table_lock);
	bool last = in->refs == 1;
	sfs_mutex_unlock(&table_lock);
	if (last) {
		sfs_inode_lock(in);
		sfs_lease_drop_locked(in);
		if (in->log.logged)
			sfs_inode_log_commit(in);
		sfs_inode_unlock(in);
	}
}

void sfs_inode_put(struct sfs_inode *in)
{
	struct sfs_inode *victim = NULL;
	release_if_last(in);
	sfs_mutex_lock(&table_lock);
	if (--in->refs > 0) {
		sfs_mutex_unlock(&table_lock);
		return;
	}
	if (in->unhashed) {
		victim = in;
	} else if (atomic_load(&in->staged)) {
		/* Staged bytes that no close could relink (an error was reported
		 * then): nothing can reach them any more. */
		unhash_locked(in);
		victim = in;
	} else {
		/* Cache it with the target's mappings; give back the staging
		 * store. With no references left, no other thread can be using
		 * it. */
		sfs_stage_detach(&in->stage);
		/* No application file is open: its record locks are gone. (The
		 * locked set still remembers the file: an unmanaged descriptor
		 * may hold locks on it.) */
		close_kfd(in, in->stale_kfd);
		in->stale_kfd = -1;
		lru_push(in);
		if (ncached > CACHE_MAX) {
			victim = lru_last;
			lru_unlink(victim);
			unhash_locked(victim);
		}
		/* A closed file the library still holds open for writing cannot
		 * be executed (ETXTBSY): the background thread evicts it shortly
		 * (and fork/exec do at once), off the close path. That is
		 * also a write-only open not widened yet (kwritable, not
		 * writable: a shell's `echo ... > script` in sync and strict
		 * modes, which manage a writer from its open). */
		if ((in->writable || in->kwritable) && in != victim) {
			atomic_store(&idle_writable, true);
			sfs_staging_kick();
		}
	}
	if (victim)
		ndestroying++;
	sfs_mutex_unlock(&table_lock);
	if (victim)
		destroy_counted(victim);
}

void sfs_inode_unhash(struct sfs_inode *in)
{
	sfs_mutex_lock(&table_lock);
	if (!in->unhashed) {
		if (in->refs == 0) /* cached: cannot happen for a caller's ref */
			lru_unlink(in);
		unhash_locked(in);
		in->unhashed = true;
	}
	sfs_mutex_unlock(&table_lock);
}

void sfs_inode_forget(dev_t dev, ino_t ino)
{
	sfs_mutex_lock(&table_lock);
	struct sfs_inode *in = lookup_locked(dev, ino);
	if (in && in->refs == 0) {
		evict_locked(in);
	} else {
		in = NULL;
	}
	sfs_mutex_unlock(&table_lock);
	if (in)
		destroy_counted(in);
}

void sfs_inode_foreach(void (*fn)(struct sfs_inode *, void *), void *arg)
{
	sfs_mutex_lock(&table_lock);
	if (nhashed == 0) {
		sfs_mutex_unlock(&table_lock);
		return;
	}
	size_t n = 0, cap = 64;
	struct sfs_inode **list = malloc(cap * sizeof(*list));
	int seen = 0;
	for (int b = 0; list && b < NBUCKETS && seen < nhashed; b++) {
		for (struct sfs_inode *in = buckets[b]; in; in = in->hnext) {
			seen++;
			if (in->refs == 0)
				continue;
			if (n == cap) {
				struct sfs_inode **bigger = realloc(list, 2 * cap * sizeof(*list));
				if (!bigger)
					break;
				list = bigger;
				cap *= 2;
			}
			in->refs++;
			list[n++] = in;
		}
	}
	sfs_mutex_unlock(&table_lock);
	for (size_t i = 0; i < n; i++) {
		fn(list[i], arg);
		sfs_inode_put(list[i]);
	}
	free(list);
}

void sfs_inode_foreach_nowait(void (*fn)(struct sfs_inode *))
{
	if (sfs_mutex_trylock(&table_lock) != 0)
		return;
	int seen = 0;
	for (int b = 0; b < NBUCKETS && seen < nhashed; b++)
		for (struct sfs_inode *in = buckets[b]; in; in = in->hnext, seen++)
			if (in->refs > 0)
				fn(in);
	sfs_mutex_unlock(&table_lock);
}

bool sfs_inode_any(void)
{
	return atomic_load_explicit(&nhashed, memory_order_relaxed) > 0;
}

int sfs_inode_staged_count(void)
{
	return atomic_load_explicit(&nstaged, memory_order_relaxed);
}

void sfs_inode_staged_changed(int delta)
{
	atomic_fetch_add(&nstaged, delta);
}

void sfs_inode_resync_locked(struct sfs_inode *in)
{
	/* The kernel's size must be read under the lock: one read before it
	 * could predate a relink of ours and shrink the file back. */
	struct stat st;
	if (atomic_load(&in->staged) || sfs_fstat_quiet(in->kfd, &st) != 0)
		return;
	int64_t kernel_size = st.st_size;
	if (atomic_load(&in->ksize) == kernel_size && atomic_load(&in->size) == kernel_size)
		return;
	/* Shrinking unmaps what readers may be copying: close the barrier. */
	sfs_inode_kernel_changed(in); /* another process changed the size */
	bool shrink = kernel_size < atomic_load(&in->size);
	if (shrink)
		sfs_barrier_close(in);
	atomic_store(&in->ksize, kernel_size);
	atomic_store(&in->size, kernel_size);
	if (shrink)
		sfs_barrier_open(in);
}

void sfs_inode_table_reset(void)
{
	sfs_mutex_reset_child(&table_lock);
	sfs_cond_reset_child(&destroyed);
	SFS_SET(ndestroying, 0);
	for (int b = 0; b < NBUCKETS && nhashed > 0; b++) {
		struct sfs_inode *in = buckets[b];
		while (in) {
			struct sfs_inode *next = in->hnext;
			sfs_map_drop_all(&in->maps);
			sfs_write_ahead_free(in);
			sfs_cold_write_free(in);
			/* The parent owns the staged bytes; the child only drops
			 * its copy of the store. */
			sfs_stage_forget(&in->stage);
			sfs_internal_close(in->kfd);
			free(in);
			in = next;
			nhashed--;
		}
		buckets[b] = NULL;
	}
	SFS_SET(lru_first, NULL);
	SFS_SET(lru_last, NULL);
	SFS_SET(ncached, 0);
	sfs_kernel_sets_reset();
	SFS_SET(nstaged, 0);
}
