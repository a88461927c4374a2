/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "share.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../staging/census.h"
#include "../sys/real.h"
#include "../util/clock.h"
#include "../util/compiler.h"
#include "../util/signals.h"

#define NSLOTS 1024u	/* processes of the user with a slot at once */
#define NBUCKETS 1024u	/* block locks: a power of two */
#define PROBE 16u	/* slots a process looks at for its own */
#define NFILES 256u	/* buckets of files with sessions: a power of two */
#define SHARE_LAYOUT 2u /* this file's struct area (1 had no file buckets) */
#define BLOCK_SHIFT 12	/* 4 KiB blocks */

/* A process's slot. owner: generation << 32 | pid; 0 free; BUSY while its
 * fields change (a claim or a reclaim). claimed_ns: CLOCK_BOOTTIME at the
 * claim, to tell its process from a later one with the same pid. */
struct slot {
	_Alignas(64) _Atomic uint64_t owner;
	_Atomic int64_t claimed_ns;
	_Atomic uint32_t inflight; /* pending calls in the kernel now */
	_Atomic int32_t sessions;  /* sharing sessions running */
	/* The file buckets (struct area) its sessions count in, a bit each:
	 * a reclaim takes a dead process's counts away. */
	_Atomic uint64_t files[NFILES / 64];
};
#define BUSY ((uint64_t)UINT32_MAX)

/* A block lock. lock: 0 free, or the holder's slot generation << 32 |
 * (slot + 1), ANON for a process without a slot. seq: odd while held. */
struct bucket {
	_Alignas(64) _Atomic uint64_t lock;
	_Atomic uint32_t seq;
};
#define ANON ((uint64_t)0xffff)

/* The area in the census segment. Zeros when the segment is made: every
 * slot free, every lock free, no session, which is the state it starts
 * in (no initialization to race with). */
struct area {
	struct {
		_Alignas(64) _Atomic int64_t n;
		/* SHARE_LAYOUT, set by the first process that uses the area: a
		 * process of a library with another layout leaves it alone. */
		_Atomic uint32_t layout;
	} sharing; /* sessions of all the user's processes */
	struct {
		_Alignas(64) _Atomic uint32_t n;
	} overflow; /* pending calls in flight of processes without a slot */
	struct {
		_Alignas(64) _Atomic uint32_t n;
	} gen; /* the last slot generation given out */
	/* Per bucket of files (a hash of the file), the processes with a
	 * session on a file of it: a pending call whose file's bucket counts
	 * none goes to the kernel while other files have sessions. */
	_Alignas(64) _Atomic int32_t files[NFILES];
	struct slot slot[NSLOTS];
	struct bucket bucket[NBUCKETS];
};
static_assert(sizeof(struct slot) == 64 && sizeof(struct bucket) == 64, "one line each");
static_assert(sizeof(struct area) == 3 * 64 + NFILES * 4 + (NSLOTS + NBUCKETS) * 64,
	      "the area's layout");
static_assert(sizeof(struct area) <= SFS_CENSUS_SHARE_BYTES, "the area fits the segment");
static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
	      "processes share these words: lock-free atomics only");
static_assert(NSLOTS < ANON, "a slot number fits a lock word");

/* This process: the area (NULL: none), whether others of the user may use
 * one (when this process has none), its slot (-1: none; UNCLAIMED: not
 * looked for yet), its lock word. */
enum { UNTRIED, ATTACHED, NOT_HERE };
SFS_HOT static _Atomic int state = UNTRIED;
SFS_HOT static struct area *area_p;
SFS_HOT static bool others_may;
#define UNCLAIMED (-2)
SFS_HOT static _Atomic int my = UNCLAIMED;
SFS_HOT static uint64_t my_lock = ANON;
SFS_HOT static atomic_bool exited;
static _Atomic int64_t next_scan; /* ns: the next look for dead sessions */
SFS_HOT static pthread_mutex_t claim_lock = PTHREAD_MUTEX_INITIALIZER;
/* This process's sessions per file bucket (under session_lock): the
 * bucket's count and the slot's bit go up with the first, down with the
 * last. */
SFS_HOT static int32_t my_files[NFILES];
SFS_HOT static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;

/* --- processes --------------------------------------------------------------- */

static int64_t boottime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_BOOTTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* When process pid started (CLOCK_BOOTTIME ns, rounded down to a clock
 * tick), from /proc/PID/stat; -1 when it cannot be read (gone), INT64_MAX
 * when it is a zombie (dead, its threads gone: only its parent has not
 * reaped it yet). */
static int64_t started_ns(pid_t pid)
{
	char path[32], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (sfs_kernel_read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* After the command's ")" (which may hold spaces and parentheses):
	 * field 3, state, then 19 more up to starttime, field 22. */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	if (p[2] == 'Z' || p[2] == 'X')
		return INT64_MAX;
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -1;
	unsigned long long ticks = strtoull(p + 1, NULL, 10);
	long hz = sysconf(_SC_CLK_TCK);
	return hz > 0 ? (int64_t)(ticks * (1000000000ull / (unsigned long long)hz)) : -1;
}

/* Whether the process that claimed the slot (owner o, claimed at ns) is
 * gone: no process has its pid, or the one that has it started after the
 * claim. A start within the claim's clock tick counts as alive (slower,
 * never wrong). */
static bool owner_dead(uint64_t o, int64_t claimed)
{
	pid_t pid = (pid_t)(uint32_t)o;
	if (pid <= 0 || o == BUSY)
		return false;
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return true;
	int64_t start = started_ns(pid);
	return start > claimed;
}

/* A slot's sessions stop counting: the user's total, and each file bucket
 * it has a bit in. */
static void drop_counts(struct area *a, struct slot *s)
{
	int32_t n = atomic_exchange(&s->sessions, 0);
	if (n > 0)
		atomic_fetch_sub(&a->sharing.n, n);
	for (unsigned w = 0; w < NFILES / 64; w++)
		for (uint64_t bits = atomic_exchange(&s->files[w], 0); bits; bits &= bits - 1)
			atomic_fetch_sub(&a->files[w * 64 + (unsigned)__builtin_ctzll(bits)], 1);
}

/* The slot of a dead owner o: its sessions and calls in flight stop
 * counting, and it is free again. */
static void reclaim(struct area *a, unsigned i, uint64_t o)
{
	struct slot *s = &a->slot[i];
	if (!atomic_compare_exchange_strong(&s->owner, &o, BUSY))
		return; /* someone else did, or it changed hands */
	drop_counts(a, s);
	atomic_store(&s->inflight, 0);
	atomic_store_explicit(&s->owner, 0, memory_order_release);
}

static bool take(struct area *a, unsigned i, pid_t pid)
{
	struct slot *s = &a->slot[i];
	uint64_t free_ = 0;
	if (!atomic_compare_exchange_strong(&s->owner, &free_, BUSY))
		return false;
	uint32_t gen;
	while ((gen = atomic_fetch_add(&a->gen.n, 1) + 1) == 0 || gen == UINT32_MAX)
		;
	atomic_store(&s->claimed_ns, boottime_ns());
	atomic_store(&s->inflight, 0);
	atomic_store(&s->sessions, 0);
	for (unsigned w = 0; w < NFILES / 64; w++)
		atomic_store(&s->files[w], 0);
	uint64_t owner = (uint64_t)gen << 32 | (uint32_t)pid;
	atomic_store_explicit(&s->owner, owner, memory_order_release);
	my_lock = (uint64_t)gen << 32 | (i + 1);
	atomic_store(&my, (int)i);
	return true;
}

/* A slot for this process: a free one near its pid's, or its own pid's
 * from a former life (an exec, or a dead process whose pid it has now), or
 * a dead process's. None: the process counts in the overflow word. Caller
 * holds claim_lock. */
static void claim(struct area *a)
{
	pid_t pid = getpid();
	unsigned h = ((uint32_t)pid * 2654435761u) % NSLOTS;
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned k = 0; k < PROBE; k++) {
			unsigned i = (h + k) % NSLOTS;
			uint64_t o = atomic_load(&a->slot[i].owner);
			if (o && o != BUSY &&
			    ((uint32_t)o == (uint32_t)pid ||
			     (pass == 1 && owner_dead(o, atomic_load(&a->slot[i].claimed_ns)))))
				reclaim(a, i, o);
			if (take(a, i, pid))
				return;
		}
	}
	my_lock = ANON;
	atomic_store(&my, -1);
}

/* This process's area, attached (and its slot claimed) at first use; NULL
 * when it has none. */
static struct area *area(void)
{
	if (sfs_likely(atomic_load_explicit(&state, memory_order_acquire) == ATTACHED &&
		       atomic_load_explicit(&my, memory_order_acquire) != UNCLAIMED))
		return area_p;
	if (atomic_load_explicit(&state, memory_order_acquire) == NOT_HERE)
		return NULL;
	pthread_mutex_lock(&claim_lock);
	if (atomic_load(&state) == UNTRIED) {
		bool may = true;
		area_p = sfs_census_share_area(&may);
		uint32_t none = 0;
		if (area_p &&
		    !atomic_compare_exchange_strong(&area_p->sharing.layout, &none, SHARE_LAYOUT) &&
		    none != SHARE_LAYOUT)
			area_p = NULL; /* another library's: others may use it */
		others_may = may;
		atomic_store_explicit(&state, area_p ? ATTACHED : NOT_HERE, memory_order_release);
	}
	if (area_p && atomic_load(&my) == UNCLAIMED)
		claim(area_p);
	pthread_mutex_unlock(&claim_lock);
	return area_p;
}

void sfs_share_attach(void)
{
	area();
}

static _Atomic uint32_t *inflight_of(struct area *a)
{
	int i = atomic_load_explicit(&my, memory_order_relaxed);
	return i >= 0 ? &a->slot[i].inflight : &a->overflow.n;
}

/* At most every 100 ms while sessions are counted: the sessions of dead
 * processes stop counting (a process killed during one leaves its count). */
static void scan_dead(struct area *a)
{
	int64_t now = sfs_coarse_ns();
	int64_t next = atomic_load_explicit(&next_scan, memory_order_relaxed);
	if (now < next ||
	    !atomic_compare_exchange_strong(&next_scan, &next, now + 100 * 1000 * 1000))
		return;
	int mine = atomic_load(&my);
	for (unsigned i = 0; i < NSLOTS; i++) {
		struct slot *s = &a->slot[i];
		if ((int)i == mine || atomic_load_explicit(&s->sessions, memory_order_relaxed) <= 0)
			continue;
		uint64_t o = atomic_load(&s->owner);
		if (owner_dead(o, atomic_load(&s->claimed_ns)))
			reclaim(a, i, o);
	}
}

/* --- pending calls and sessions ---------------------------------------------- */

int sfs_share_raw_begin(void)
{
	struct area *a = area();
	if (!a) /* nobody's sessions (no segment for anyone), or unseen ones */
		return others_may ? SFS_RAW_NO : SFS_RAW_GO;
	_Atomic uint32_t *c = inflight_of(a);
	atomic_fetch_add(c, 1); /* seq_cst: before the look at the sessions */
	if (sfs_likely(atomic_load(&a->sharing.n) == 0))
		return SFS_RAW_GO;
	scan_dead(a);
	return SFS_RAW_ASK;
}

/* The bucket of files (dev, ino) counts in. */
static unsigned file_of(dev_t dev, ino_t ino)
{
	uint64_t x =
		((uint64_t)dev * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)ino * 0xc2b2ae3d27d4eb4full);
	return (unsigned)(x >> 56) & (NFILES - 1);
}

bool sfs_share_raw_file(dev_t dev, ino_t ino)
{
	/* seq_cst, after the count raw_begin made: a session on this file
	 * either shows here or waits for this call (session_begin). */
	if (atomic_load(&area_p->files[file_of(dev, ino)]) == 0)
		return true;
	sfs_share_raw_end();
	return false;
}

void sfs_share_raw_end(void)
{
	if (area_p) /* raw_begin attached it, if there is one */
		atomic_fetch_sub_explicit(inflight_of(area_p), 1, memory_order_release);
}

/* Waits until the count c (of slot i, or the overflow: i < 0) is 0 once;
 * false if it stayed up for 2 ms and its process lives (or is unknown). */
static bool quiet(struct area *a, _Atomic uint32_t *c, int i)
{
	if (atomic_load(c) == 0)
		return true;
	int64_t t0 = sfs_coarse_ns();
	for (;;) {
		sched_yield();
		if (atomic_load(c) == 0)
			return true;
		if (sfs_coarse_ns() - t0 < 2 * 1000 * 1000)
			continue;
		if (i < 0)
			return false;
		uint64_t o = atomic_load(&a->slot[i].owner);
		if (!owner_dead(o, atomic_load(&a->slot[i].claimed_ns)))
			return false;
		reclaim(a, (unsigned)i, o);
		return true;
	}
}

/* Counts (up) or uncounts (down) a session of this process on file
 * bucket f: the bucket's count and the slot's bit with the process's
 * first and last session there. false: nothing to uncount (the process
 * exited, its counts went then). */
static bool count_session(struct area *a, int i, unsigned f, bool up)
{
	pthread_mutex_lock(&session_lock);
	bool ok = up || (!atomic_load(&exited) && my_files[f] > 0);
	if (ok && (up ? my_files[f]++ == 0 : --my_files[f] == 0)) {
		uint64_t bit = 1ull << (f % 64);
		if (up) {
			atomic_fetch_or(&a->slot[i].files[f / 64], bit);
			atomic_fetch_add(&a->files[f], 1); /* seq_cst: before the looks */
		} else {
			atomic_fetch_sub(&a->files[f], 1);
			atomic_fetch_and(&a->slot[i].files[f / 64], ~bit);
		}
	}
	if (ok) {
		atomic_fetch_add(&a->sharing.n, up ? 1 : -1);
		atomic_fetch_add(&a->slot[i].sessions, up ? 1 : -1);
	}
	pthread_mutex_unlock(&session_lock);
	return ok;
}

bool sfs_share_session_begin(dev_t dev, ino_t ino)
{
	struct area *a = area();
	int i = atomic_load(&my);
	if (!a || i < 0 || atomic_load(&exited))
		return false;
	unsigned f = file_of(dev, ino);
	count_session(a, i, f, true);
	bool ok = quiet(a, &a->overflow.n, -1);
	for (unsigned k = 0; ok && k < NSLOTS; k++)
		ok = quiet(a, &a->slot[k].inflight, (int)k);
	if (!ok)
		count_session(a, i, f, false);
	return ok;
}

void sfs_share_session_end(dev_t dev, ino_t ino)
{
	struct area *a = area_p;
	int i = atomic_load(&my);
	if (a && i >= 0)
		count_session(a, i, file_of(dev, ino), false);
}

bool sfs_share_storing(void)
{
	return !atomic_load_explicit(&exited, memory_order_relaxed);
}

void sfs_share_exit(void)
{
	struct area *a = area_p;
	int i = atomic_load(&my);
	pthread_mutex_lock(&session_lock);
	atomic_store(&exited, true);
	if (a && i >= 0)
		drop_counts(a, &a->slot[i]);
	memset(my_files, 0, sizeof(my_files));
	pthread_mutex_unlock(&session_lock);
}

void sfs_share_reset_child(void)
{
	sfs_mutex_reset_child(&claim_lock);
	sfs_mutex_reset_child(&session_lock);
	for (unsigned i = 0; i < NFILES; i++)
		SFS_SET(my_files[i], 0);
	SFS_SET(my_lock, ANON);
	SFS_SET(my, UNCLAIMED);
	SFS_SET(next_scan, 0);
}

/* --- block locks ------------------------------------------------------------- */

static uint64_t file_hash(dev_t dev, ino_t ino)
{
	uint64_t x = (uint64_t)dev * 0x9e3779b97f4a7c15ull ^ (uint64_t)ino;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static void span_of(dev_t dev, ino_t ino, int64_t off, uint64_t n, struct sfs_share_span *sp)
{
	uint64_t b0 = (uint64_t)off >> BLOCK_SHIFT, b1 = ((uint64_t)off + n - 1) >> BLOCK_SHIFT;
	sp->first = (unsigned)((file_hash(dev, ino) + b0) & (NBUCKETS - 1));
	sp->count = b1 - b0 + 1 >= NBUCKETS ? NBUCKETS : (unsigned)(b1 - b0 + 1);
	sp->sum = 0;
}

/* The k-th bucket of a span in ascending order: every locker takes its
 * buckets in one order, so no two wait for each other in a cycle. */
static unsigned nth(const struct sfs_share_span *sp, unsigned k)
{
	unsigned wrapped = sp->first + sp->count > NBUCKETS ? sp->first + sp->count - NBUCKETS : 0;
	return k < wrapped ? k : sp->first + (k - wrapped);
}

/* Whether the holder of lock word w is gone (its slot reclaimed, or its
 * process dead: then reclaimed now). A process without a slot is never
 * known to be gone. */
static bool holder_gone(struct area *a, uint64_t w)
{
	uint64_t i = (w & 0xffff) - 1;
	if ((w & 0xffff) == ANON || i >= NSLOTS)
		return false;
	struct slot *s = &a->slot[i];
	uint64_t o = atomic_load(&s->owner);
	if (o >> 32 != w >> 32)
		return true; /* the slot changed hands: its holder is gone */
	if (!owner_dead(o, atomic_load(&s->claimed_ns)))
		return false;
	reclaim(a, (unsigned)i, o);
	return true;
}

static void lock_bucket(struct area *a, struct bucket *b)
{
	int64_t t0 = 0;
	for (unsigned spins = 0;; spins++) {
		uint64_t w = atomic_load_explicit(&b->lock, memory_order_relaxed);
		if (w == 0) {
			if (atomic_compare_exchange_weak_explicit(&b->lock, &w, my_lock,
								  memory_order_acquire,
								  memory_order_relaxed))
				break;
			continue;
		}
		if (spins < 64)
			continue;
		sched_yield();
		/* Every millisecond of waiting: is its holder still there? */
		int64_t now = sfs_coarse_ns();
		if (!t0)
			t0 = now;
		if (now - t0 < 1000 * 1000)
			continue;
		t0 = now;
		if (holder_gone(a, w) && atomic_compare_exchange_strong(&b->lock, &w, my_lock))
			break;
	}
	/* Odd while held; a dead holder may have left it odd already. */
	uint32_t q = atomic_load_explicit(&b->seq, memory_order_relaxed);
	if (!(q & 1))
		atomic_store_explicit(&b->seq, q + 1, memory_order_relaxed);
}

int sfs_share_lock(dev_t dev, ino_t ino, int64_t off, uint64_t n, struct sfs_share_span *sp)
{
	struct area *a = area();
	if (!a)
		return -ENOSYS;
	span_of(dev, ino, off, n, sp);
	/* A critical section while held: a signal handler of this thread
	 * that wrote the same blocks would wait for itself. */
	sfs_busy_enter();
	for (unsigned k = 0; k < sp->count; k++)
		lock_bucket(a, &a->bucket[nth(sp, k)]);
	/* The odd counters are seen before any byte of the write. */
	atomic_thread_fence(memory_order_seq_cst);
	return 0;
}

void sfs_share_unlock(const struct sfs_share_span *sp)
{
	struct area *a = area_p;
	for (unsigned k = 0; k < sp->count; k++) {
		struct bucket *b = &a->bucket[nth(sp, k)];
		atomic_fetch_add_explicit(&b->seq, 1, memory_order_release);
		atomic_store_explicit(&b->lock, 0, memory_order_release);
	}
	sfs_busy_exit();
}

static uint64_t sum_of(struct area *a, const struct sfs_share_span *sp, uint32_t *odd)
{
	uint64_t sum = 0;
	uint32_t any = 0;
	for (unsigned k = 0; k < sp->count; k++) {
		uint32_t q = atomic_load_explicit(&a->bucket[(sp->first + k) & (NBUCKETS - 1)].seq,
						  memory_order_acquire);
		sum += q;
		any |= q;
	}
	*odd = any & 1;
	return sum;
}

int sfs_share_read_begin(dev_t dev, ino_t ino, int64_t off, uint64_t n, struct sfs_share_span *sp)
{
	struct area *a = area();
	if (!a)
		return -ENOSYS;
	span_of(dev, ino, off, n, sp);
	uint32_t odd;
	sp->sum = sum_of(a, sp, &odd);
	return !odd;
}

bool sfs_share_read_valid(const struct sfs_share_span *sp)
{
	uint32_t odd;
	atomic_thread_fence(memory_order_acquire); /* the read's loads come first */
	return sum_of(area_p, sp, &odd) == sp->sum;
}

void sfs_share_read_wait(const struct sfs_share_span *sp)
{
	struct area *a = area_p;
	for (unsigned k = 0; k < sp->count; k++) {
		struct bucket *b = &a->bucket[nth(sp, k)];
		if (!(atomic_load(&b->seq) & 1))
			continue;
		sfs_busy_enter(); /* as in sfs_share_lock */
		lock_bucket(a, b);
		atomic_fetch_add_explicit(&b->seq, 1, memory_order_release);
		atomic_store_explicit(&b->lock, 0, memory_order_release);
		sfs_busy_exit();
	}
}
