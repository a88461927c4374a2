/* SPDX-License-Identifier: Apache-2.0 */
/* Versioned reads (KucoFS §4.3): a read never returns a block that a
 * concurrent write of the same process has half changed, and readers write
 * no shared memory to get that.
 *
 * Every 4 KiB block of the file maps to one of SFS_VER_STRIPES sequence
 * counters (block number modulo the count), each on its own cache line. A
 * writer makes the counters of the blocks it is about to change odd (which
 * also locks them against other writers: writers of disjoint stripes run at
 * once, KucoFS's range locking at stripe grain), changes them, and makes
 * the counters even again. A reader notes the counters of its range,
 * copies, and keeps the copy only if none of them moved and none was odd:
 * then no write of a block it read ran meanwhile. Otherwise it copies
 * again. Two blocks that share a counter only cost a retry or a wait,
 * never a wrong answer.
 *
 * This orders the library's own readers and writers, as the kernel's inode
 * lock orders read(2) and write(2) (POSIX 2.9.7). Another process is never
 * served from the same mappings at the same time (a lease, lease.h). */
#ifndef SFS_FS_VERSIONS_H
#define SFS_FS_VERSIONS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sched.h>
#include <stdint.h>

#include "../util/compiler.h"

#define SFS_VER_STRIPES 32 /* a power of two */
#define SFS_VER_SHIFT 12   /* 4 KiB blocks */

struct sfs_versions {
	struct {
		_Alignas(64) _Atomic uint32_t seq;
	} stripe[SFS_VER_STRIPES];
};
static_assert(sizeof(struct sfs_versions) == 64 * SFS_VER_STRIPES, "one counter per line");

/* The seqlock's fences. ThreadSanitizer models none (gcc warns so under
 * -fsanitize=thread, -Wtsan, an error with -Werror): its build keeps the
 * same fences without the warning, and hides from it the reader's copy,
 * the one access that races with writers by design (sfs_racy_copy_begin,
 * compiler.h). */
#if SFS_TSAN && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif
static inline void sfs_ver_fence(memory_order mo)
{
	atomic_thread_fence(mo);
}
#if SFS_TSAN && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* The stripes [first, first + count) (modulo the count) that cover
 * [off, off + n); n > 0. */
static inline void sfs_ver_span(int64_t off, uint64_t n, unsigned *first, unsigned *count)
{
	uint64_t b0 = (uint64_t)off >> SFS_VER_SHIFT;
	uint64_t b1 = ((uint64_t)off + n - 1) >> SFS_VER_SHIFT;
	*first = (unsigned)(b0 & (SFS_VER_STRIPES - 1));
	*count = b1 - b0 + 1 >= SFS_VER_STRIPES ? SFS_VER_STRIPES : (unsigned)(b1 - b0 + 1);
}

/* The k-th stripe of the span in ascending index order: every writer
 * takes its stripes in that one order, so two writers never wait for each
 * other in a cycle. */
static inline unsigned sfs_ver_nth(unsigned first, unsigned count, unsigned k)
{
	unsigned wrapped = first + count > SFS_VER_STRIPES ? first + count - SFS_VER_STRIPES : 0;
	return k < wrapped ? k : first + (k - wrapped);
}

/* Writers lock the stripes of their range: a counter made odd (from even,
 * by compare and swap) is both the lock and, to readers, a write in
 * progress. try: the stripes if all are free now; false, holding none,
 * otherwise. */
static inline bool sfs_ver_lock_try(struct sfs_versions *v, int64_t off, uint64_t n)
{
	unsigned first, count;
	if (n == 0)
		return true;
	sfs_ver_span(off, n, &first, &count);
	for (unsigned k = 0; k < count; k++) {
		_Atomic uint32_t *s = &v->stripe[sfs_ver_nth(first, count, k)].seq;
		uint32_t q = atomic_load_explicit(s, memory_order_relaxed);
		if ((q & 1) || !atomic_compare_exchange_strong_explicit(
				       s, &q, q + 1, memory_order_acquire, memory_order_relaxed)) {
			while (k-- > 0) { /* let go: even again (readers retry once) */
				_Atomic uint32_t *h = &v->stripe[sfs_ver_nth(first, count, k)].seq;
				atomic_fetch_add_explicit(h, 1, memory_order_release);
			}
			return false;
		}
	}
	/* The seqlock writer's fence: the odd counters are seen before any
	 * byte of the write. */
	sfs_ver_fence(memory_order_release);
	return true;
}

/* The same, waiting for each stripe (its holder only copies, it never
 * waits for anything while it holds one). */
static inline void sfs_ver_lock(struct sfs_versions *v, int64_t off, uint64_t n)
{
	unsigned first, count;
	if (n == 0)
		return;
	sfs_ver_span(off, n, &first, &count);
	for (unsigned k = 0; k < count; k++) {
		_Atomic uint32_t *s = &v->stripe[sfs_ver_nth(first, count, k)].seq;
		for (unsigned spins = 0;; spins++) {
			uint32_t q = atomic_load_explicit(s, memory_order_relaxed);
			if (!(q & 1) && atomic_compare_exchange_weak_explicit(s, &q, q + 1,
									      memory_order_acquire,
									      memory_order_relaxed))
				break;
			if (spins > 64)
				sched_yield();
		}
	}
	sfs_ver_fence(memory_order_release); /* as in sfs_ver_lock_try */
}

static inline void sfs_ver_unlock(struct sfs_versions *v, int64_t off, uint64_t n)
{
	unsigned first, count;
	if (n == 0)
		return;
	sfs_ver_span(off, n, &first, &count);
	for (unsigned k = 0; k < count; k++)
		atomic_fetch_add_explicit(&v->stripe[sfs_ver_nth(first, count, k)].seq, 1,
					  memory_order_release);
}

/* Every stripe: a change of the whole file (a truncation). */
#define SFS_VER_ALL ((uint64_t)SFS_VER_STRIPES << SFS_VER_SHIFT)

/* What a reader notes before it copies: its stripes and the sum of their
 * counters. Counters only grow, so an unchanged sum means no counter moved. */
struct sfs_ver_snap {
	unsigned first, count;
	uint64_t sum;
};

static inline uint64_t sfs_ver_sum(struct sfs_versions *v, unsigned first, unsigned count,
				   uint32_t *odd, memory_order mo)
{
	uint64_t sum = 0;
	uint32_t any = 0;
	for (unsigned i = 0; i < count; i++) {
		uint32_t q = atomic_load_explicit(
			&v->stripe[(first + i) & (SFS_VER_STRIPES - 1)].seq, mo);
		sum += q;
		any |= q;
	}
	*odd = any & 1;
	return sum;
}

/* Notes the counters of [off, off + n), n > 0. false: a write of the
 * range is running (try again). */
static inline bool sfs_ver_read_begin(struct sfs_versions *v, int64_t off, uint64_t n,
				      struct sfs_ver_snap *s)
{
	uint32_t odd;
	sfs_ver_span(off, n, &s->first, &s->count);
	if (sfs_likely(s->count == 1)) { /* one block: the common read */
		s->sum = atomic_load_explicit(&v->stripe[s->first].seq, memory_order_acquire);
		return !(s->sum & 1);
	}
	s->sum = sfs_ver_sum(v, s->first, s->count, &odd, memory_order_acquire);
	return !odd;
}

/* After the copy: true if no write of the range ran since read_begin. */
static inline bool sfs_ver_read_valid(struct sfs_versions *v, const struct sfs_ver_snap *s)
{
	uint32_t odd;
	sfs_ver_fence(memory_order_acquire); /* the copy's loads come first */
	if (sfs_likely(s->count == 1))
		return atomic_load_explicit(&v->stripe[s->first].seq, memory_order_relaxed) ==
		       s->sum;
	return sfs_ver_sum(v, s->first, s->count, &odd, memory_order_relaxed) == s->sum;
}

#endif
