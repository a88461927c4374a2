/* SPDX-License-Identifier: Apache-2.0 */
/* The mapping collection of one file: MAP_SHARED mappings of fixed-size,
 * size-aligned chunks (SPLITFS_MAP_SIZE, 2 MiB by default), made on first
 * touch and kept until the owner drops them (paper §3.5, "cache of memory
 * mappings"). Lookups are lock-free: a two-level radix of atomic pointers,
 * where a racing second mapper loses a compare-and-swap and unmaps its copy.
 * All tables share one budget of mappings (a quarter of vm.max_map_count):
 * past it, sfs_map_get fails with -ENOMEM and the caller uses pread/pwrite. */
#ifndef SFS_MAP_MAPTAB_H
#define SFS_MAP_MAPTAB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../sys/global.h"

#define SFS_MAP_FANOUT 512 /* entries per radix level: covers 512*512 chunks */

struct sfs_maptab {
	_Atomic(_Atomic(char *) *) dir[SFS_MAP_FANOUT];
	/* 1 + the highest index of dir that holds a leaf (0: none), so that
	 * a file never mapped (most files) costs no scan of dir when its
	 * mappings are protected or dropped. */
	atomic_int top;
	/* Writable chunks are mapped MAP_SYNC (a DAX file whose stores the
	 * library flushes itself: a write fault makes the blocks' metadata
	 * durable before it returns). Cleared, for good, when the kernel
	 * refuses MAP_SYNC: the owner then leaves durability to fsync. */
	atomic_bool sync;
};

/* sfs_map_get (below), out of line: the base address of the chunk holding
 * file offset off, mapping it from fd with prot. Returns NULL and sets
 * *err (-ENOMEM when the budget is spent, -EFBIG past the radix, or mmap's
 * error). lazy: the first touches of a chunk only count (-EAGAIN: the
 * caller uses pread/pwrite); the fourth maps it (SFS_MAP_AFTER). A few
 * small accesses then cost a system call each instead of an mmap, faults
 * and an munmap later. */
char *sfs_map_get_slow(struct sfs_maptab *t, int fd, uint64_t off, int prot, bool lazy, int *err);

/* A slot below this holds a count of touches (sfs_map_get_slow), not a
 * mapping. */
#define SFS_MAP_AFTER 4

/* The chunk holding off if it is mapped, else NULL; never maps: two
 * loads, inlined into the data path. */
static inline char *sfs_map_mapped(struct sfs_maptab *t, uint64_t off)
{
	uint64_t idx = off >> sfs_g.map_shift;
	if (idx >= (uint64_t)SFS_MAP_FANOUT * SFS_MAP_FANOUT)
		return NULL;
	_Atomic(char *) *l =
		atomic_load_explicit(&t->dir[idx / SFS_MAP_FANOUT], memory_order_acquire);
	char *p = l ? atomic_load_explicit(&l[idx % SFS_MAP_FANOUT], memory_order_acquire) : NULL;
	return (uintptr_t)p >= SFS_MAP_AFTER ? p : NULL;
}

/* sfs_map_get, inlined where the chunk is mapped already (every copy but a
 * chunk's first few). */
static inline char *sfs_map_get(struct sfs_maptab *t, int fd, uint64_t off, int prot, bool lazy,
				int *err)
{
	char *p = sfs_map_mapped(t, off);
	return p ? p : sfs_map_get_slow(t, fd, off, prot, lazy, err);
}

/* A word the owner keeps for the chunk holding off (0 when the chunk's
 * leaf is made, gone with it), or NULL before the chunk was first looked
 * up with sfs_map_get. */
_Atomic uint32_t *sfs_map_word(struct sfs_maptab *t, uint64_t off);

/* Gives every mapped chunk prot (mprotect), e.g. read-only once the
 * process has no descriptor of the file open for writing. No reader may be
 * inside (a reader maps chunks). 0 or -errno. */
int sfs_map_protect_all(struct sfs_maptab *t, int prot);

/* Unmaps every chunk and frees the radix (no reader may be inside). */
void sfs_map_drop_all(struct sfs_maptab *t);

/* Forgets every chunk without unmapping (a forked child's copy of a table
 * whose memory it will release separately). */
void sfs_map_forget(struct sfs_maptab *t);

/* Number of chunks mapped by the process. */
long sfs_map_count(void);

#endif
