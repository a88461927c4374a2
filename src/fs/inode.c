/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "inode.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../init.h"
#include "../interpose/real.h"
#include "../oplog/oplog.h"
#include "../relink/relink.h"
#include "../staging/pool.h"
#include "../util/compiler.h"
#include "../util/msg.h"
#include "fdtable.h"
#include "flush.h"
#include "registry.h"

#define NBUCKETS 4096
#define CACHE_MAX 32 /* closed inodes kept with their mappings (paper §3.5) */

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sfs_inode *buckets[NBUCKETS];
static struct sfs_inode lru = {.lru_prev = &lru, .lru_next = &lru};
static int ncached;
static atomic_int nstaged;

/* --- barrier ------------------------------------------------------------- */

/* barrier: 0 open, 1 closed, 2 closed with readers sleeping on the futex. */
static void futex(atomic_int *word, int op, int val)
{
	sfs_real.syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

void sfs_barrier_close(struct sfs_inode *in)
{
	atomic_store(&in->barrier, 1);
	while (atomic_load(&in->readers))
		sched_yield();
}

void sfs_barrier_open(struct sfs_inode *in)
{
	if (atomic_exchange(&in->barrier, 0) == 2)
		futex(&in->barrier, FUTEX_WAKE, INT_MAX);
}

/* Out-of-line slow path of sfs_read_enter when the barrier is closed: sleep
 * rather than spin, since a relink can take milliseconds. */
void sfs_read_wait(struct sfs_inode *in)
{
	int b = 1;
	atomic_compare_exchange_strong(&in->barrier, &b, 2);
	if (atomic_load(&in->barrier) == 2)
		futex(&in->barrier, FUTEX_WAIT, 2);
}

/* --- the writer lock and other processes ---------------------------------- */

/* The inode locks this thread holds (a few at most: no path nests deeper),
 * so that a thread about to wait for the operation log can relink its own
 * windows first (sfs_relink_held). One beyond the array is not tracked. */
static __thread struct sfs_inode *held[4] __attribute__((tls_model("initial-exec")));
static __thread int nheld __attribute__((tls_model("initial-exec")));

static void held_add(struct sfs_inode *in)
{
	if (nheld < (int)SFS_ARRAY_SIZE(held))
		held[nheld] = in;
	nheld++;
}

static void held_remove(struct sfs_inode *in)
{
	int n = SFS_MIN(nheld, (int)SFS_ARRAY_SIZE(held));
	for (int i = n - 1; i >= 0; i--) {
		if (held[i] == in) {
			held[i] = held[n - 1];
			break;
		}
	}
	nheld--;
}

void sfs_inode_lock(struct sfs_inode *in)
{
	if (in->reg)
		sfs_reg_lock(in->reg);
	else
		pthread_mutex_lock(&in->own_lock);
	held_add(in);
}

bool sfs_inode_trylock(struct sfs_inode *in)
{
	if (in->reg ? !sfs_reg_trylock(in->reg) : pthread_mutex_trylock(&in->own_lock) != 0)
		return false;
	held_add(in);
	return true;
}

void sfs_inode_unlock(struct sfs_inode *in)
{
	held_remove(in);
	if (in->reg)
		sfs_reg_unlock(in->reg);
	else
		pthread_mutex_unlock(&in->own_lock);
}

int sfs_inode_held(struct sfs_inode **out, int max)
{
	int n = SFS_MIN(SFS_MIN(nheld, (int)SFS_ARRAY_SIZE(held)), max);
	memcpy(out, held, (size_t)n * sizeof(*out));
	return n;
}

bool sfs_inode_contended_locked(struct sfs_inode *in)
{
	struct sfs_reg_entry *e = in->reg;
	if (!e)
		return false;
	uint32_t gen = atomic_load(&e->gen);
	if (gen != in->reg_gen) {
		/* Another process relinked our window into the file: it is in
		 * the kernel now; drop the staged copy and take the real size. */
		in->reg_gen = gen;
		sfs_inode_kernel_changed(in);
		if (atomic_load(&in->staged)) {
			sfs_barrier_close(in);
			atomic_store(&in->staged, false);
			sfs_inode_staged_changed(-1);
			sfs_stage_empty(&in->stage);
			struct stat st;
			int64_t ksize = sfs_real.fstat(in->kfd, &st) == 0 ? st.st_size
									   : atomic_load(&in->size);
			atomic_store(&in->ksize, ksize);
			atomic_store(&in->size, ksize);
			sfs_barrier_open(in);
		}
	}
	return atomic_load(&e->shared) != 0;
}

void sfs_inode_publish_locked(struct sfs_inode *in)
{
	if (in->reg)
		sfs_reg_publish(in->reg, atomic_load(&in->staged), in->stage.fd,
				in->stage.kind == SFS_STAGE_RING ? in->stage.cap : 0, in->kfd,
				atomic_load(&in->base), atomic_load(&in->size));
}

/* Joins the registry for a file this process starts using; false when
 * another process has it open (the file must be left to the kernel). */
static bool join(struct sfs_inode *in)
{
	bool alone;
	in->reg = sfs_reg_join(in->dev, in->ino, &alone);
	if (in->reg)
		in->reg_gen = atomic_load(&in->reg->gen);
	return alone;
}

static void leave(struct sfs_inode *in)
{
	sfs_reg_leave(in->reg);
	in->reg = NULL;
}

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
	in->lru_prev->lru_next = in->lru_next;
	in->lru_next->lru_prev = in->lru_prev;
	in->lru_prev = in->lru_next = NULL;
	ncached--;
}

static void unhash_locked(struct sfs_inode *in)
{
	struct sfs_inode **pp = &buckets[hash(in->dev, in->ino)];
	while (*pp != in)
		pp = &(*pp)->hnext;
	*pp = in->hnext;
}

static void release_stage(struct sfs_inode *in)
{
	sfs_stage_detach(&in->stage);
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
	/* Sync/strict: its records die with it (a later inode object of the
	 * same file binds a new id, and replay must not run these after that
	 * one's). */
	if (in->logged)
		sfs_oplog_commit(in);
	if (atomic_load(&in->staged))
		sfs_inode_staged_changed(-1);
	sfs_map_drop_all(&in->maps);
	release_stage(in);
	close_kfd(in, in->kfd);
	close_kfd(in, in->stale_kfd);
	leave(in);
	pthread_mutex_destroy(&in->own_lock);
	free(in);
}

/* Opens the library's own descriptor on the file open at fd. Writable
 * (O_RDWR, never O_APPEND, whatever the application's flags) only while the
 * application has the file open for writing: an open writable descriptor,
 * or a writable shared mapping, makes execve of the file fail with ETXTBSY. */
static int reopen(int fd, bool want_write, bool *writable, bool locks)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int kfd = sfs_real.open(path, (want_write ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY);
	*writable = kfd >= 0 && want_write;
	if (kfd < 0)
		return -errno;
	if (locks) {
		/* Moving it up (dup, then close) would close a descriptor of the
		 * file: it stays where it is, hidden all the same. */
		sfs_fd_set_internal(kfd, true);
		return kfd;
	}
	return sfs_internal_fd(kfd);
}

static bool writes(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY;
}

void sfs_inode_unshare_kfd(struct sfs_inode *in)
{
	sfs_inode_lock(in);
	if (in->kfd_shared) {
		bool writable;
		int kfd = reopen(in->kfd, in->writable, &writable,
				 atomic_load(&in->posix_locks) ||
					 sfs_posix_locked(in->dev, in->ino));
		if (kfd >= 0) {
			/* No barrier needed: the mappings stay valid (same file,
			 * same protection); only later pwrites use the new one. */
			int old = in->kfd;
			in->kfd = kfd;
			in->kfd_shared = false;
			if (atomic_load(&in->posix_locks) || sfs_posix_locked(in->dev, in->ino))
				; /* closing the old one would drop the locks: keep it */
			else
				sfs_internal_close(old);
		}
	}
	sfs_inode_unlock(in);
}

void sfs_inode_writer_gone(struct sfs_inode *in)
{
	sfs_inode_lock(in);
	in->nwriters--;
	sfs_inode_unlock(in);
}

/* Closed inodes still holding a writable descriptor (evicted soon). */
static atomic_bool idle_writable;

void sfs_inode_evict_writable(void)
{
	if (!atomic_exchange(&idle_writable, false))
		return;
	struct sfs_inode *victims = NULL;
	pthread_mutex_lock(&table_lock);
	for (struct sfs_inode *in = lru.lru_next, *next; in != &lru; in = next) {
		next = in->lru_next;
		if (!in->writable)
			continue;
		lru_unlink(in);
		unhash_locked(in);
		in->hnext = victims;
		victims = in;
	}
	pthread_mutex_unlock(&table_lock);
	while (victims) {
		struct sfs_inode *next = victims->hnext;
		destroy(victims);
		victims = next;
	}
}

/* The library's descriptor for a new inode. When the application's access
 * mode and flags are what the library needs (O_RDONLY, or O_RDWR without
 * O_APPEND) a duplicate of its descriptor serves (one system call, which
 * also places it high); the library uses it only with explicit offsets, so
 * sharing the offset is harmless, and F_SETFL O_APPEND on that open file
 * makes the library open its own (fd.c). */
static int own_fd(int appfd, int flags, bool locks, bool *writable, bool *shared)
{
	int acc = flags & O_ACCMODE;
	*shared = false;
	if ((acc == O_RDONLY || acc == O_RDWR) && !(flags & O_APPEND)) {
		int kfd = sfs_real.fcntl(appfd, F_DUPFD_CLOEXEC, sfs_g.fd_floor);
		if (kfd >= 0) {
			sfs_fd_set_internal(kfd, true);
			*writable = acc == O_RDWR;
			*shared = true;
			return kfd;
		}
	}
	return reopen(appfd, writes(flags), writable, locks);
}

static struct sfs_inode *create(int appfd, const struct stat *st, int flags)
{
	bool writable, shared;
	bool locks = sfs_posix_locked(st->st_dev, st->st_ino);
	int kfd = own_fd(appfd, flags, locks, &writable, &shared);
	if (kfd < 0)
		return NULL;
	struct sfs_inode *in = calloc(1, sizeof(*in));
	if (!in) {
		sfs_internal_close(kfd);
		return NULL;
	}
	in->dev = st->st_dev;
	in->ino = st->st_ino;
	in->kfd = kfd;
	in->kfd_shared = shared;
	in->writable = writable;
	pthread_mutex_init(&in->own_lock, NULL);
	atomic_store(&in->ksize, st->st_size);
	atomic_store(&in->size, st->st_size);
	in->stage.fd = -1;
	in->stale_kfd = -1;
	atomic_store(&in->posix_locks, locks);
	in->refs = 1;
	in->nwriters = writes(flags) ? 1 : 0;
	sfs_inode_dax_setup(in);
	atomic_store(&in->kdirty, true);
	if (!join(in)) {
		destroy(in);
		return NULL;
	}
	return in;
}

/* An existing inode opened again: upgrade a read-only kfd if this open wants
 * to write, and take the kernel's size if nothing is staged (or the open
 * truncated the file). Returns false when the file cannot be managed. */
static bool reuse(struct sfs_inode *in, int appfd, int flags, bool from_cache)
{
	if (from_cache && !join(in))
		return false;
	bool ok = true;
	sfs_inode_lock(in);
	if (writes(flags)) {
		/* Upgrade through the application's new descriptor: it proves the
		 * caller may write (the old one may be read-only). */
		if (!in->writable) {
			bool writable;
			int kfd = reopen(appfd, true, &writable, atomic_load(&in->posix_locks));
			if (kfd >= 0) {
				int old = in->kfd;
				in->kfd = kfd;
				sfs_barrier_close(in);
				sfs_map_drop_all(&in->maps); /* read-only chunks */
				sfs_inode_dax_setup(in);
				if (atomic_load(&in->posix_locks) && in->stale_kfd < 0)
					in->stale_kfd = old; /* closing it would drop locks */
				else
					sfs_internal_close(old);
				in->writable = true;
				sfs_barrier_open(in);
			} else {
				ok = false;
			}
		}
		if (ok)
			in->nwriters++;
	}
	if (ok && (flags & O_TRUNC) && atomic_load(&in->staged)) {
		/* The kernel already truncated the file: staged bytes are gone. */
		sfs_barrier_close(in);
		atomic_store(&in->staged, false);
		sfs_inode_staged_changed(-1);
		sfs_stage_empty(&in->stage);
		sfs_inode_publish_locked(in);
		sfs_barrier_open(in);
	}
	/* Coming out of the cache, or truncated by this open: the kernel's
	 * size is the truth (another process may have changed the file). */
	if (ok && (from_cache || (flags & O_TRUNC))) {
		sfs_inode_kernel_changed(in);
		sfs_inode_resync_locked(in);
	}
	sfs_inode_unlock(in);
	return ok;
}

struct sfs_inode *sfs_inode_open(int appfd, const struct stat *st, int flags)
{
	pthread_mutex_lock(&table_lock);
	struct sfs_inode *in = lookup_locked(st->st_dev, st->st_ino);
	if (in) {
		bool from_cache = in->refs++ == 0;
		if (from_cache)
			lru_unlink(in);
		pthread_mutex_unlock(&table_lock);
		if (!reuse(in, appfd, flags, from_cache)) {
			sfs_inode_put(in);
			return NULL;
		}
		return in;
	}
	pthread_mutex_unlock(&table_lock);

	struct sfs_inode *fresh = create(appfd, st, flags);
	if (!fresh)
		return NULL;
	pthread_mutex_lock(&table_lock);
	in = lookup_locked(st->st_dev, st->st_ino);
	if (!in) {
		unsigned h = hash(fresh->dev, fresh->ino);
		fresh->hnext = buckets[h];
		buckets[h] = fresh;
		pthread_mutex_unlock(&table_lock);
		return fresh;
	}
	/* Another thread created it first: use theirs. */
	bool from_cache = in->refs++ == 0;
	if (from_cache)
		lru_unlink(in);
	pthread_mutex_unlock(&table_lock);
	destroy(fresh);
	if (!reuse(in, appfd, flags, from_cache)) {
		sfs_inode_put(in);
		return NULL;
	}
	return in;
}

struct sfs_inode *sfs_inode_find(dev_t dev, ino_t ino)
{
	pthread_mutex_lock(&table_lock);
	struct sfs_inode *in = lookup_locked(dev, ino);
	if (in && in->refs++ == 0)
		lru_unlink(in);
	pthread_mutex_unlock(&table_lock);
	return in;
}

/* Sync/strict: a file nothing has open keeps no live log records. Were it
 * evicted later (in the background), a new inode object for the same file
 * could change it meanwhile under another log id, and a crash before the
 * eviction would replay the old records over that. */
static void commit_if_last(struct sfs_inode *in)
{
	if (!in->logged)
		return;
	pthread_mutex_lock(&table_lock);
	bool last = in->refs == 1;
	pthread_mutex_unlock(&table_lock);
	if (last) {
		sfs_inode_lock(in);
		sfs_oplog_commit(in);
		sfs_inode_unlock(in);
	}
}

void sfs_inode_put(struct sfs_inode *in)
{
	struct sfs_inode *victim = NULL;
	commit_if_last(in);
	pthread_mutex_lock(&table_lock);
	if (--in->refs > 0) {
		pthread_mutex_unlock(&table_lock);
		return;
	}
	if (atomic_load(&in->staged)) {
		/* Staged bytes that no close could relink (an error was reported
		 * then): nothing can reach them any more. */
		unhash_locked(in);
		victim = in;
	} else {
		/* Cache it with the target's mappings; give back the staging file
		 * and the registry slot. With no references left, no other
		 * thread can be using it. */
		release_stage(in);
		leave(in);
		/* No application file is open: its record locks are gone. (The
		 * locked set still remembers the file: an unmanaged descriptor
		 * may hold locks on it.) */
		close_kfd(in, in->stale_kfd);
		in->stale_kfd = -1;
		in->lru_next = lru.lru_next;
		in->lru_prev = &lru;
		lru.lru_next->lru_prev = in;
		lru.lru_next = in;
		if (++ncached > CACHE_MAX) {
			victim = lru.lru_prev;
			lru_unlink(victim);
			unhash_locked(victim);
		}
		/* A closed file the library still holds open for writing cannot
		 * be executed (ETXTBSY): the background thread evicts it shortly
		 * (and fork/exec do at once), off the close path. */
		if (in->writable && in != victim) {
			atomic_store(&idle_writable, true);
			sfs_staging_kick();
		}
	}
	pthread_mutex_unlock(&table_lock);
	if (victim)
		destroy(victim);
}

void sfs_inode_forget(dev_t dev, ino_t ino)
{
	pthread_mutex_lock(&table_lock);
	struct sfs_inode *in = lookup_locked(dev, ino);
	if (in && in->refs == 0) {
		lru_unlink(in);
		unhash_locked(in);
	} else {
		in = NULL;
	}
	pthread_mutex_unlock(&table_lock);
	if (in)
		destroy(in);
}

void sfs_inode_foreach(void (*fn)(struct sfs_inode *, void *), void *arg)
{
	pthread_mutex_lock(&table_lock);
	size_t n = 0, cap = 64;
	struct sfs_inode **list = malloc(cap * sizeof(*list));
	for (int b = 0; list && b < NBUCKETS; b++) {
		for (struct sfs_inode *in = buckets[b]; in; in = in->hnext) {
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
	pthread_mutex_unlock(&table_lock);
	for (size_t i = 0; i < n; i++) {
		fn(list[i], arg);
		sfs_inode_put(list[i]);
	}
	free(list);
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
	if (atomic_load(&in->staged) || sfs_real.fstat(in->kfd, &st) != 0)
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
	pthread_mutex_init(&table_lock, NULL);
	for (int b = 0; b < NBUCKETS; b++) {
		struct sfs_inode *in = buckets[b];
		while (in) {
			struct sfs_inode *next = in->hnext;
			/* The child inherited the parent's descriptors of it. */
			if (in->refs > 0)
				sfs_reg_pin(in->dev, in->ino);
			sfs_map_drop_all(&in->maps);
			/* The parent owns the staged bytes; the child only drops
			 * its copy of the store. */
			sfs_stage_forget(&in->stage);
			sfs_internal_close(in->kfd);
			free(in);
			in = next;
		}
		buckets[b] = NULL;
	}
	lru.lru_next = lru.lru_prev = &lru;
	ncached = 0;
	sfs_kernel_sets_reset();
	atomic_store(&nstaged, 0);
}
