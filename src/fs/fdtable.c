/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "fdtable.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "file.h"
#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/signals.h"

/* The file a pending mark was set for (under its descriptor's lock). */
struct pend_id {
	dev_t dev;
	ino_t ino;
	bool known;  /* dev and ino are set (sfs_fd_set_pending_new: not yet) */
	bool synced; /* the application fsynced it while pending */
};

struct fd_array {
	int n;		     /* a power of two, at least 256 */
	struct pend_id *ids; /* n of them, after the slots */
	_Atomic(struct sfs_file *) slot[];
};

/* Where fd's slot lies: descriptors next to each other, as the files
 * threads open at the same time are, SPREAD slots apart, each in a cache
 * line of its own, so that their calls (each kernel call of a pending
 * descriptor writes its slot twice) do not all write one line. Ids are
 * written once an open: by number. */
#define SPREAD 16u
static_assert(256 / SPREAD * sizeof(void *) >= 64, "neighbours a cache line apart");

static unsigned slot_index(const struct fd_array *a, int fd)
{
	unsigned f = (unsigned)fd;
	return (f % SPREAD) * ((unsigned)a->n / SPREAD) + f / SPREAD;
}

static _Atomic(struct sfs_file *) *slot_at(struct fd_array *a, int fd)
{
	return &a->slot[slot_index(a, fd)];
}

SFS_HOT static _Atomic(struct fd_array *) table;
SFS_HOT static atomic_int high_water;

/* A slot of an array being replaced by a larger one: its value is in the
 * new array, published once every slot is forwarded (grow). The current
 * array never holds it, so only lock-free callers meet it: they follow the
 * table to the new array. */
#define FORWARDED_MARK 3u /* SFS_FD_INTERNAL is 1, SFS_FD_DSYNC 2 */
#define FORWARDED ((struct sfs_file *)(uintptr_t)FORWARDED_MARK)

/* The array a grow is filling, until it is published: a child forked
 * meanwhile finds the forwarded values there (sfs_fd_reset). */
static _Atomic(struct fd_array *) growing;

/* current_slot's wait for a grow in progress. */
static __attribute__((noinline)) _Atomic(struct sfs_file *) *slot_after_grow(int fd,
									     struct sfs_file **v);

/* fd's slot in the current array and its value *v, following a grow in
 * progress; NULL (and *v NULL) past the array. Lock-free. */
static inline _Atomic(struct sfs_file *) *current_slot(int fd, struct sfs_file **v)
{
	struct fd_array *a = atomic_load_explicit(&table, memory_order_acquire);
	if (fd < 0 || !a || fd >= a->n) {
		*v = NULL;
		return NULL;
	}
	_Atomic(struct sfs_file *) *slot = slot_at(a, fd);
	*v = atomic_load_explicit(slot, memory_order_acquire);
	return sfs_likely(*v != FORWARDED) ? slot : slot_after_grow(fd, v);
}

static _Atomic(struct sfs_file *) *slot_after_grow(int fd, struct sfs_file **v)
{
	_Atomic(struct sfs_file *) *slot;
	do {
		sched_yield(); /* the grower holds every stripe, briefly */
		slot = current_slot(fd, v);
	} while (*v == FORWARDED);
	return slot;
}

/* The locks of the slots: one per stripe of descriptor numbers, each on its
 * own cache line. A call on a descriptor takes its stripe's lock only, so
 * that threads opening, reading and closing different files do not take
 * turns (one lock for all held 4 threads to a third of the kernel's rate,
 * bench/results). Growing the array takes every stripe, in order; nothing
 * else holds two. */
#define STRIPES 64
static struct stripe {
	_Alignas(64) pthread_mutex_t m;
} stripes[STRIPES] = {[0 ... STRIPES - 1] = {PTHREAD_MUTEX_INITIALIZER}};
static_assert(sizeof(struct stripe) == 64, "one lock per cache line");

static void lock_fd(int fd)
{
	sfs_mutex_lock(&stripes[(unsigned)fd % STRIPES].m);
}

static void unlock_fd(int fd)
{
	sfs_mutex_unlock(&stripes[(unsigned)fd % STRIPES].m);
}

/* A pending mark: PEND_BASE + ops * PEND_SLOTS + inflight, where ops
 * counts the kernel reads and writes begun (up to SFS_FD_PENDING_OPS) and
 * inflight those still running; PROMOTING while one call manages the
 * descriptor. A kernel call's count and the claim of a promotion change
 * the mark with one compare-and-swap, without the lock (a pending read
 * takes no lock); so a locked writer that decides on what a pending slot
 * holds swaps it too (swap_slot). */
#define PEND_BASE 16u
#define PEND_SLOTS 64u
#define PROMOTING ((struct sfs_file *)(uintptr_t)4000)
static_assert(PEND_BASE + (SFS_FD_PENDING_OPS + 1) * PEND_SLOTS <= 4000 && 4000 <= SFS_FD_MARK_MAX,
	      "pending marks lie below PROMOTING, among the marks");
static_assert(FORWARDED_MARK > 2 && FORWARDED_MARK < PEND_BASE, "FORWARDED is no other mark");
SFS_HOT static atomic_int npending; /* slots holding a pending mark */

static bool is_pending(const struct sfs_file *v)
{
	return (uintptr_t)v >= PEND_BASE && (uintptr_t)v <= SFS_FD_MARK_MAX;
}

static struct sfs_file *pend(unsigned ops, unsigned inflight)
{
	return (struct sfs_file *)(uintptr_t)(PEND_BASE + ops * PEND_SLOTS + inflight);
}

/* A pending mark's kernel calls begun, and those still running. */
static unsigned ops_of(const struct sfs_file *v)
{
	return (unsigned)((uintptr_t)v - PEND_BASE) / PEND_SLOTS;
}

static unsigned inflight_of(const struct sfs_file *v)
{
	return (unsigned)((uintptr_t)v - PEND_BASE) % PEND_SLOTS;
}

/* A slot went from old to v: npending follows. Only when a mark comes or
 * goes: a kernel call of a pending descriptor, which changes its mark's
 * counts, writes no shared line. */
static void count_pending(const struct sfs_file *old, const struct sfs_file *v)
{
	int delta = (int)is_pending(v) - (int)is_pending(old);
	if (delta)
		atomic_fetch_add(&npending, delta);
}

/* Caller holds the slot's lock: the slot goes to v. Returns what it held
 * (a lock-free call may have changed it since the caller looked). */
static struct sfs_file *store_slot(_Atomic(struct sfs_file *) *slot, struct sfs_file *v)
{
	struct sfs_file *old = atomic_exchange(slot, v);
	count_pending(old, v);
	return old;
}

/* fd's *slot goes from *v to nv; false when it held something else (or
 * the swap failed spuriously): *v is then what it holds, and *slot the
 * new array's after a grow. In a loop, with or without fd's lock (under
 * it no grow runs, and no lock-free call changes a slot but a pending
 * mark's). Inlined: it is one instruction on every pending call's path. */
static inline __attribute__((always_inline)) bool
swap_slot(int fd, _Atomic(struct sfs_file *) **slot, struct sfs_file **v, struct sfs_file *nv)
{
	struct sfs_file *old = *v;
	if (!atomic_compare_exchange_weak(*slot, v, nv)) {
		if (*v == FORWARDED)
			*slot = current_slot(fd, v);
		return false;
	}
	count_pending(old, nv);
	return true;
}

struct sfs_file *sfs_fd_get(int fd)
{
	for (;;) {
		struct sfs_file *f;
		_Atomic(struct sfs_file *) *slot = current_slot(fd, &f);
		if ((uintptr_t)f <= SFS_FD_MARK_MAX) /* empty, or a mark */
			return NULL;
		if (sfs_file_tryget(f)) {
			/* The file may have been closed and its object reused for
			 * another descriptor in between (or the slot forwarded by
			 * a grow): confirm it is still ours. */
			if (atomic_load_explicit(slot, memory_order_acquire) == f)
				return f;
			sfs_file_put(f);
		}
	}
}

bool sfs_fd_is_internal(int fd)
{
	struct sfs_file *v;
	current_slot(fd, &v);
	return v == SFS_FD_INTERNAL;
}

bool sfs_fd_is_dsync(int fd)
{
	struct sfs_file *v;
	current_slot(fd, &v);
	return v == SFS_FD_DSYNC;
}

/* Caller holds every stripe. Grows the array to cover fd. */
static struct fd_array *grow(int fd)
{
	struct fd_array *a = atomic_load_explicit(&table, memory_order_relaxed);
	if (a && fd < a->n)
		return a;
	int n = a ? a->n : 256;
	while (n <= fd)
		n *= 2;
	/* Zero pages from the kernel, faulted in as they are touched: the
	 * library's first descriptor (512 and up, sys/self.h) makes a
	 * 1024-slot array in every process, of which a few pages are used
	 * (calloc zeroed and touched all 32 KiB). */
	struct fd_array *b = SFS_REAL(mmap)(
		NULL, sizeof(*b) + (size_t)n * (sizeof(b->slot[0]) + sizeof(struct pend_id)),
		PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		return NULL;
	static_assert(sizeof(b->slot[0]) % _Alignof(struct pend_id) == 0, "ids after the slots");
	b->n = n;
	b->ids = (struct pend_id *)&b->slot[n];
	atomic_store(&growing, b);
	/* Each value goes to the new array before its old slot says so: a
	 * lock-free call's swap lands before (and is copied) or fails. */
	for (int d = 0; a && d < a->n; d++) {
		struct sfs_file *v = atomic_load(slot_at(a, d));
		do
			atomic_store_explicit(slot_at(b, d), v, memory_order_relaxed);
		while (!atomic_compare_exchange_weak(slot_at(a, d), &v, FORWARDED));
	}
	if (a)
		memcpy(b->ids, a->ids, (size_t)a->n * sizeof(*a->ids));
	/* The old array is deliberately leaked: lock-free readers may hold it. */
	atomic_store_explicit(&table, b, memory_order_release);
	atomic_store(&growing, NULL);
	return b;
}

/* covered's grow, under every stripe. */
static __attribute__((noinline)) bool grow_to(int fd)
{
	for (int i = 0; i < STRIPES; i++)
		sfs_mutex_lock(&stripes[i].m);
	struct fd_array *a = grow(fd);
	for (int i = STRIPES - 1; i >= 0; i--)
		sfs_mutex_unlock(&stripes[i].m);
	return a != NULL;
}

/* Whether the array covers fd, grown if it did not; false: no memory for
 * it. The caller holds no stripe (it may take fd's next: an array never
 * shrinks). */
static inline bool covered(int fd)
{
	struct fd_array *a = atomic_load_explicit(&table, memory_order_acquire);
	return sfs_likely(a && fd < a->n) || grow_to(fd);
}

/* Caller holds fd's lock, and the array covers fd (covered). Sets fd's
 * slot to v; *old (if old): what the slot held. */
static void set_slot(int fd, struct sfs_file *v, struct sfs_file **old)
{
	struct sfs_file *was = store_slot(slot_at(atomic_load(&table), fd), v);
	if (old)
		*old = was;
	int high = atomic_load(&high_water);
	while (fd >= high && !atomic_compare_exchange_weak(&high_water, &high, fd + 1))
		;
}

/* A managed file that set_slot replaced: the kernel reused the number
 * behind our back (an fd closed through a path we do not see), so our
 * reference goes. Called without the lock. */
static void drop_stale(struct sfs_file *old)
{
	if ((uintptr_t)old > SFS_FD_MARK_MAX)
		sfs_file_put(old);
}

int sfs_fd_install(int fd, struct sfs_file *f)
{
	if (fd < 0)
		return -EBADF;
	if (!covered(fd))
		return -ENOMEM;
	sfs_file_ref(f);
	struct sfs_file *old = NULL;
	lock_fd(fd);
	set_slot(fd, f, &old);
	unlock_fd(fd);
	drop_stale(old);
	return 0;
}

struct sfs_file *sfs_fd_remove(int fd)
{
	/* Without the lock: a forked child closing what it will not need
	 * before its exec writes no page of the stripes, and a close writes
	 * the slot once. (A slot set meanwhile by another thread's open of
	 * the same number races this close with or without the lock.) */
	struct sfs_file *f;
	_Atomic(struct sfs_file *) *slot = current_slot(fd, &f);
	while (f && f != SFS_FD_INTERNAL && !swap_slot(fd, &slot, &f, NULL))
		;
	return (uintptr_t)f <= SFS_FD_MARK_MAX ? NULL : f;
}

void sfs_fd_set_internal(int fd, bool internal)
{
	if (fd < 0 || (internal && !covered(fd)))
		return;
	lock_fd(fd);
	if (internal)
		set_slot(fd, SFS_FD_INTERNAL, NULL);
	else {
		struct fd_array *a = atomic_load(&table);
		if (a && fd < a->n && atomic_load(slot_at(a, fd)) == SFS_FD_INTERNAL)
			atomic_store(slot_at(a, fd), NULL);
	}
	unlock_fd(fd);
}

void sfs_fd_set_dsync(int fd, bool dsync)
{
	if (fd < 0 || (dsync && !covered(fd)))
		return;
	lock_fd(fd);
	struct fd_array *a = atomic_load(&table);
	struct sfs_file *cur = a && fd < a->n ? atomic_load(slot_at(a, fd)) : NULL;
	if (dsync && !cur)
		set_slot(fd, SFS_FD_DSYNC, NULL);
	else if (!dsync && cur == SFS_FD_DSYNC)
		atomic_store(slot_at(a, fd), NULL);
	unlock_fd(fd);
}

int sfs_fd_limit(void)
{
	return atomic_load(&high_water);
}

void sfs_fd_reset(bool dsync)
{
	for (int i = 0; i < STRIPES; i++)
		sfs_mutex_reset_child(&stripes[i].m);
	/* Forked in the middle of another thread's grow: finish it. A
	 * forwarded slot's value is in the new array, the others' in the
	 * old one (grow). */
	struct fd_array *a = atomic_load(&table), *b = atomic_load(&growing);
	if (b && b != a) {
		for (int fd = 0; a && fd < a->n; fd++) {
			struct sfs_file *v = atomic_load(slot_at(a, fd));
			if (v != FORWARDED)
				atomic_store(slot_at(b, fd), v);
		}
		if (a)
			memcpy(b->ids, a->ids, (size_t)a->n * sizeof(*a->ids));
		atomic_store(&table, b);
		atomic_store(&growing, NULL);
		a = b;
	}
	/* Only slots that change are written: a child that only execs copies
	 * no page of the table it does not need to. */
	for (int i = 0; a && i < a->n; i++) {
		struct sfs_file *f = atomic_load(&a->slot[i]), *keep = NULL;
		if (f == SFS_FD_DSYNC)
			keep = f;
		else if (f && f != SFS_FD_INTERNAL && !is_pending(f) && dsync)
			keep = SFS_FD_DSYNC; /* pending ones are the kernel's in the child */
		if (keep != f)
			atomic_store(&a->slot[i], keep);
	}
	if (atomic_load(&npending))
		atomic_store(&npending, 0);
}

static void set_pending(int fd, struct pend_id id)
{
	if (fd < 0 || !covered(fd))
		return;
	struct sfs_file *old = NULL;
	lock_fd(fd);
	set_slot(fd, pend(0, 0), &old);
	atomic_load(&table)->ids[fd] = id;
	unlock_fd(fd);
	drop_stale(old);
}

void sfs_fd_set_pending(int fd, dev_t dev, ino_t ino)
{
	set_pending(fd, (struct pend_id){.dev = dev, .ino = ino, .known = true});
}

void sfs_fd_set_pending_new(int fd)
{
	set_pending(fd, (struct pend_id){.known = false});
}

enum sfs_fd_kind sfs_fd_kind(int fd)
{
	struct sfs_file *v;
	current_slot(fd, &v);
	return is_pending(v)		      ? SFS_FD_KIND_PENDING :
	       (uintptr_t)v > SFS_FD_MARK_MAX ? SFS_FD_KIND_MANAGED :
						SFS_FD_KIND_KERNEL;
}

bool sfs_fd_any_pending(void)
{
	return atomic_load_explicit(&npending, memory_order_relaxed) > 0;
}

/* Caller holds fd's lock: fd's slot, or NULL past the array. */
static _Atomic(struct sfs_file *) *slot_locked(int fd)
{
	struct fd_array *a = atomic_load(&table);
	return fd >= 0 && a && fd < a->n ? slot_at(a, fd) : NULL;
}

enum sfs_pending_step sfs_fd_pending_begin(int fd, bool promote)
{
	for (;;) {
		struct sfs_file *v, *next = NULL;
		_Atomic(struct sfs_file *) *slot = current_slot(fd, &v);
		if (!is_pending(v))
			return SFS_PENDING_NO;
		enum sfs_pending_step step = SFS_PENDING_NO; /* wait and look again */
		unsigned ops = ops_of(v), inflight = inflight_of(v);
		if (v == PROMOTING) {
			/* another call manages it */
		} else if ((promote || ops >= SFS_FD_PENDING_OPS) && inflight == 0) {
			next = PROMOTING;
			step = SFS_PENDING_PROMOTE;
		} else if (promote) {
			/* for the kernel calls in flight */
		} else if (inflight + 1 < PEND_SLOTS) {
			ops = ops < SFS_FD_PENDING_OPS ? ops + 1 : ops;
			next = pend(ops, inflight + 1);
			step = SFS_PENDING_KERNEL;
		} /* else as many callers as the mark counts */
		if (step == SFS_PENDING_NO)
			sched_yield();
		else if (swap_slot(fd, &slot, &v, next))
			return step;
	}
}

void sfs_fd_pending_end(int fd)
{
	struct sfs_file *v;
	_Atomic(struct sfs_file *) *slot = current_slot(fd, &v);
	/* The mark may be gone (the descriptor closed meanwhile). */
	while (is_pending(v) && v != PROMOTING && inflight_of(v) > 0 &&
	       !swap_slot(fd, &slot, &v, (struct sfs_file *)((uintptr_t)v - 1)))
		;
}

bool sfs_fd_pending_may_be(int fd, dev_t dev, ino_t ino)
{
	lock_fd(fd);
	struct fd_array *a = atomic_load(&table);
	bool same = fd >= 0 && a && fd < a->n &&
		    (!a->ids[fd].known || (a->ids[fd].dev == dev && a->ids[fd].ino == ino));
	unlock_fd(fd);
	return same;
}

bool sfs_fd_pending_id(int fd, dev_t *dev, ino_t *ino)
{
	lock_fd(fd);
	_Atomic(struct sfs_file *) *slot = slot_locked(fd);
	struct pend_id id = {.known = false};
	if (slot && is_pending(atomic_load(slot)))
		id = atomic_load(&table)->ids[fd];
	unlock_fd(fd);
	*dev = id.dev;
	*ino = id.ino;
	return id.known;
}

void sfs_fd_pending_identify(int fd, dev_t dev, ino_t ino)
{
	lock_fd(fd);
	_Atomic(struct sfs_file *) *slot = slot_locked(fd);
	struct pend_id *id =
		slot && is_pending(atomic_load(slot)) ? &atomic_load(&table)->ids[fd] : NULL;
	if (id && !id->known)
		*id = (struct pend_id){.dev = dev, .ino = ino, .known = true, .synced = id->synced};
	unlock_fd(fd);
}

void sfs_fd_pending_synced(int fd)
{
	lock_fd(fd);
	_Atomic(struct sfs_file *) *slot = slot_locked(fd);
	if (slot && is_pending(atomic_load(slot)))
		atomic_load(&table)->ids[fd].synced = true;
	unlock_fd(fd);
}

bool sfs_fd_pending_was_synced(int fd)
{
	lock_fd(fd);
	_Atomic(struct sfs_file *) *slot = slot_locked(fd);
	bool synced = slot && is_pending(atomic_load(slot)) && atomic_load(&table)->ids[fd].synced;
	unlock_fd(fd);
	return synced;
}

bool sfs_fd_pending_claim(int fd)
{
	struct sfs_file *v;
	_Atomic(struct sfs_file *) *slot = current_slot(fd, &v);
	while (is_pending(v) && v != PROMOTING && inflight_of(v) == 0)
		if (swap_slot(fd, &slot, &v, PROMOTING))
			return true;
	return false;
}

void sfs_fd_promoted(int fd)
{
	lock_fd(fd);
	_Atomic(struct sfs_file *) *slot = slot_locked(fd);
	if (slot && atomic_load(slot) == PROMOTING)
		store_slot(slot, NULL);
	unlock_fd(fd);
}

void sfs_fd_pending_forget(int fd)
{
	if (sfs_fd_kind(fd) != SFS_FD_KIND_PENDING)
		return; /* the common case, without the lock */
	for (;;) {
		lock_fd(fd);
		_Atomic(struct sfs_file *) *slot = slot_locked(fd);
		struct sfs_file *v = slot ? atomic_load(slot) : NULL;
		/* Calls in flight end without the mark; a claim may have
		 * swapped it for PROMOTING meanwhile: then wait. */
		while (v != PROMOTING && is_pending(v) && !swap_slot(fd, &slot, &v, NULL))
			;
		unlock_fd(fd);
		if (v != PROMOTING)
			return;
		sched_yield();
	}
}

void sfs_fd_pending_forget_all(void)
{
	int limit = sfs_fd_limit();
	for (int fd = 0; fd < limit && sfs_fd_any_pending(); fd++)
		sfs_fd_pending_forget(fd);
}

void sfs_fd_pending_forget_inheritable(void)
{
	int limit = sfs_fd_limit();
	for (int fd = 0; fd < limit && sfs_fd_any_pending(); fd++) {
		if (sfs_fd_kind(fd) != SFS_FD_KIND_PENDING)
			continue;
		int flags = SFS_REAL(fcntl)(fd, F_GETFD);
		if (flags < 0 || !(flags & FD_CLOEXEC))
			sfs_fd_pending_forget(fd);
	}
}

void sfs_fd_foreach_pending(bool (*fn)(int fd, void *arg), void *arg)
{
	int limit = sfs_fd_limit();
	for (int fd = 0; fd < limit && sfs_fd_any_pending(); fd++) {
		struct sfs_file *v;
		current_slot(fd, &v);
		if (is_pending(v) && v != PROMOTING && !fn(fd, arg))
			return;
	}
}

static bool forgettable(const struct sfs_file *v)
{
	/* A promotion in progress is its promoter's to end. */
	return v && v != SFS_FD_INTERNAL && v != PROMOTING && (uintptr_t)v <= SFS_FD_MARK_MAX;
}

void sfs_fd_forget_mark(int fd)
{
	struct sfs_file *v;
	current_slot(fd, &v);
	if (!forgettable(v))
		return; /* the common case: nothing, or a managed file */
	lock_fd(fd);
	_Atomic(struct sfs_file *) *slot = slot_locked(fd);
	v = slot ? atomic_load(slot) : NULL;
	while (forgettable(v) && !swap_slot(fd, &slot, &v, NULL))
		;
	unlock_fd(fd);
}
