/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "maptab.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/real.h"
#include "../util/stats.h"
#include "protect.h"

static atomic_long nmapped;

long sfs_map_count(void)
{
	return atomic_load_explicit(&nmapped, memory_order_relaxed);
}

/* A leaf: the chunks' slots, then a word per chunk for the owner
 * (sfs_map_word). */
struct leaf {
	_Atomic(char *) slot[SFS_MAP_FANOUT];
	_Atomic uint32_t word[SFS_MAP_FANOUT];
};
/* dir[] holds a leaf's address as its slots' (walk frees it as such). */
static_assert(offsetof(struct leaf, slot) == 0, "slots first");

static _Atomic(char *) *leaf(struct sfs_maptab *t, uint64_t idx, bool create)
{
	uint64_t hi = idx / SFS_MAP_FANOUT;
	if (hi >= SFS_MAP_FANOUT)
		return NULL;
	_Atomic(char *) *l = atomic_load_explicit(&t->dir[hi], memory_order_acquire);
	if (l || !create)
		return l;
	struct leaf *made = calloc(1, sizeof(*made));
	if (!made)
		return NULL;
	_Atomic(char *) *fresh = made->slot, *expect = NULL;
	if (atomic_compare_exchange_strong_explicit(&t->dir[hi], &expect, fresh,
						    memory_order_acq_rel, memory_order_acquire)) {
		int top = atomic_load(&t->top);
		while (top < (int)hi + 1 &&
		       !atomic_compare_exchange_weak(&t->top, &top, (int)hi + 1))
			;
		return fresh;
	}
	free(fresh);
	return expect;
}

/* A slot holds NULL (never touched), a count 1..SFS_MAP_AFTER-1 (touched that
 * many times, not mapped) or the chunk's address. A chunk is mapped on its
 * SFS_MAP_AFTER-th touch: a small file read or written a few times (tar, git,
 * rsync) costs a pread or pwrite each, less than an mmap, its page faults
 * and the munmap. */
static bool touch_count(const char *p)
{
	return (uintptr_t)p < SFS_MAP_AFTER;
}

_Atomic uint32_t *sfs_map_word(struct sfs_maptab *t, uint64_t off)
{
	uint64_t idx = off >> sfs_g.map_shift;
	_Atomic(char *) *l = leaf(t, idx, false);
	return l ? &((struct leaf *)(void *)l)->word[idx % SFS_MAP_FANOUT] : NULL;
}

/* The mapping budget, read at the first mapping: a process that maps
 * nothing has no /proc file to read at its start. */
static long budget(void)
{
	long b = atomic_load_explicit(&sfs_g.max_vmas, memory_order_relaxed);
	if (b > 0)
		return b;
	b = 65530; /* the kernel's default */
	char buf[32];
	if (sfs_kernel_read_text("/proc/sys/vm/max_map_count", buf, sizeof(buf)) > 0)
		b = strtol(buf, NULL, 10);
	b = b / 4 > 0 ? b / 4 : 1;
	atomic_store_explicit(&sfs_g.max_vmas, b, memory_order_relaxed);
	return b;
}

char *sfs_map_get_slow(struct sfs_maptab *t, int fd, uint64_t off, int prot, bool lazy, int *err)
{
	uint64_t idx = off >> sfs_g.map_shift;
	_Atomic(char *) *l = leaf(t, idx, true);
	if (!l) {
		*err = idx / SFS_MAP_FANOUT >= SFS_MAP_FANOUT ? -EFBIG : -ENOMEM;
		return NULL;
	}
	_Atomic(char *) *slot = &l[idx % SFS_MAP_FANOUT];
	char *p = atomic_load_explicit(slot, memory_order_acquire);
	if (!touch_count(p))
		return p;
	if (lazy && (uintptr_t)p < SFS_MAP_AFTER - 1) {
		atomic_compare_exchange_strong(slot, &p, p + 1);
		*err = -EAGAIN;
		return NULL;
	}
	if (atomic_fetch_add(&nmapped, 1) >= budget()) {
		atomic_fetch_sub(&nmapped, 1);
		sfs_stat_event(SFS_EV_map_budget_full, 1);
		*err = -ENOMEM;
		return NULL;
	}
	size_t len = (size_t)1 << sfs_g.map_shift;
	off_t at = (off_t)(idx << sfs_g.map_shift);
	char *m = MAP_FAILED;
	if ((prot & PROT_WRITE) && atomic_load_explicit(&t->sync, memory_order_relaxed)) {
		m = SFS_REAL(mmap)(NULL, len, prot, MAP_SHARED_VALIDATE | MAP_SYNC, fd, at);
		if (m == MAP_FAILED && (errno == EOPNOTSUPP || errno == EINVAL))
			atomic_store(&t->sync, false);
	}
	if (m == MAP_FAILED)
		m = SFS_REAL(mmap)(NULL, len, prot, MAP_SHARED, fd, at);
	if (m == MAP_FAILED) {
		atomic_fetch_sub(&nmapped, 1);
		*err = -errno;
		return NULL;
	}
	if (sfs_pkey >= 0 && pkey_mprotect(m, len, prot, sfs_pkey) != 0) {
		munmap(m, len); /* never an unkeyed chunk under SPLITFS_PROTECT */
		atomic_fetch_sub(&nmapped, 1);
		*err = -errno;
		return NULL;
	}
	char *expect = atomic_load(slot);
	if (!touch_count(expect)) {
		munmap(m, len);
		atomic_fetch_sub(&nmapped, 1);
		return expect;
	}
	if (!atomic_compare_exchange_strong_explicit(slot, &expect, m, memory_order_acq_rel,
						     memory_order_acquire)) {
		munmap(m, len);
		atomic_fetch_sub(&nmapped, 1);
		return expect;
	}
	sfs_stat_event(SFS_EV_map_chunks, 1);
	return m;
}

static void walk(struct sfs_maptab *t, bool unmap)
{
	size_t len = (size_t)1 << sfs_g.map_shift;
	int top = atomic_exchange(&t->top, 0);
	for (int i = 0; i < top; i++) {
		_Atomic(char *) *l = atomic_load(&t->dir[i]);
		if (!l)
			continue;
		for (int j = 0; j < SFS_MAP_FANOUT; j++) {
			char *p = atomic_load(&l[j]);
			if (!touch_count(p) && unmap) {
				munmap(p, len);
				atomic_fetch_sub(&nmapped, 1);
			}
		}
		free(l);
		atomic_store(&t->dir[i], NULL);
	}
}

int sfs_map_protect_all(struct sfs_maptab *t, int prot)
{
	size_t len = (size_t)1 << sfs_g.map_shift;
	int rc = 0;
	int top = atomic_load(&t->top);
	for (int i = 0; i < top; i++) {
		_Atomic(char *) *l = atomic_load(&t->dir[i]);
		for (int j = 0; l && j < SFS_MAP_FANOUT; j++) {
			char *p = atomic_load(&l[j]);
			/* Without protection keys, plain mprotect: a recent kernel
			 * (6.18) refuses even key 0 where the CPU has none. */
			if (!touch_count(p) &&
			    (sfs_pkey >= 0 ? pkey_mprotect(p, len, prot, sfs_pkey) :
					     mprotect(p, len, prot)) != 0)
				rc = -errno;
		}
	}
	return rc;
}

void sfs_map_drop_all(struct sfs_maptab *t)
{
	walk(t, true);
}

void sfs_map_forget(struct sfs_maptab *t)
{
	walk(t, false);
}
