/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "coldwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/stats.h"
#include "inode.h"

/* The table of recently read or written blocks: a tag (the block's number plus
 * one, truncated; 0: empty) per slot, the slot being the block number
 * modulo the count. 8,192 slots (32 KiB) remember up to 32 MiB of blocks,
 * about a last-level cache's worth. A collision forgets a block (its next
 * write is taken as cold); a truncated tag that matches another block's
 * takes a cold block as hot. Either only costs time. */
#define RECENT_SLOTS 8192

struct sfs_recent_blocks {
	/* Where the last overwrite ended: one that starts there continues a
	 * sequential run, whose cached stores the CPU's prefetchers make
	 * cheap (4 KiB in order through 128 MiB: memcpy 166 ns, the
	 * non-temporal copy 242 ns here). */
	_Atomic int64_t next;
	_Atomic uint32_t tag[RECENT_SLOTS];
};

/* The size of the cache of index idx (0-9) of CPU 0 from sysfs
 * ("32768K"), or 0. Not sysconf(_SC_LEVEL3_CACHE_SIZE): glibc's answer on
 * this host's AMD EPYC (320 MiB) is not the 32 MiB L3 a core shares with
 * its neighbours. System calls and plain code only (the first overwrite
 * may be a signal handler's), and errno as it was. */
static int64_t cache_size(int idx)
{
	char path[] = "/sys/devices/system/cpu/cpu0/cache/index?/size";
	*strchr(path, '?') = (char)('0' + idx);
	char text[32];
	ssize_t n = sfs_kernel_read_text(path, text, sizeof(text));
	int64_t v = 0;
	ssize_t i = 0;
	for (; i < n && text[i] >= '0' && text[i] <= '9' && v < ((int64_t)1 << 40); i++)
		v = v * 10 + (text[i] - '0');
	if (i < n && text[i] == 'K')
		v <<= 10;
	else if (i < n && text[i] == 'M')
		v <<= 20;
	return v;
}

/* Files no larger than this are never taken as cold: SPLITFS_COLD_MIN,
 * else the last-level cache a core sees (L3, else L2), or 32 MiB where
 * sysfs cannot tell. */
static int64_t cold_min(void)
{
	static _Atomic int64_t min;
	int64_t v = atomic_load_explicit(&min, memory_order_relaxed);
	if (v == 0) {
		v = (int64_t)SFS_MIN(sfs_g.opt.cold_min, (uint64_t)INT64_MAX);
		if (v == 0)
			v = cache_size(3);
		if (v == 0)
			v = cache_size(2);
		if (v == 0)
			v = (int64_t)32 << 20;
		atomic_store_explicit(&min, v, memory_order_relaxed);
	}
	return v;
}

static struct sfs_recent_blocks *recent_of(struct sfs_inode *in)
{
	struct sfs_recent_blocks *r = atomic_load_explicit(&in->recent, memory_order_acquire);
	if (r)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	struct sfs_recent_blocks *none = NULL;
	if (!atomic_compare_exchange_strong_explicit(&in->recent, &none, r, memory_order_acq_rel,
						     memory_order_acquire)) {
		free(r); /* another writer's came first */
		return none;
	}
	return r;
}

/* Blocks of one copy whose tags are written: a read or write of up to
 * 64 KiB notes each of its blocks, a longer one its first 64 KiB. */
#define NOTE_BLOCKS 16

/* Whether the file is large enough for the cold path. Without
 * SPLITFS_COLD_MIN, files of 8 MiB or less are answered without looking
 * the cache's size up: a process that never touches a larger one never
 * reads sysfs. */
static bool large(const struct sfs_inode *in)
{
	int64_t size = atomic_load_explicit(&in->size, memory_order_relaxed);
	return (sfs_g.opt.cold_min || size > ((int64_t)8 << 20)) && size > cold_min();
}

static uint32_t tag_of(uint64_t block)
{
	uint32_t tag = (uint32_t)(block + 1);
	return tag ? tag : 1;
}

/* Notes the blocks of [off, off + n) as recently touched. */
static void note(struct sfs_recent_blocks *r, int64_t off, size_t n)
{
	uint64_t first = (uint64_t)off / SFS_BLOCK;
	uint64_t last = ((uint64_t)off + n - 1) / SFS_BLOCK;
	if (last - first >= NOTE_BLOCKS)
		last = first + NOTE_BLOCKS - 1;
	for (uint64_t b = first; b <= last; b++)
		atomic_store_explicit(&r->tag[b % RECENT_SLOTS], tag_of(b), memory_order_relaxed);
}

bool sfs_cold_write(struct sfs_inode *in, int64_t off, size_t n)
{
	if (n < SFS_BLOCK || !large(in))
		return false;
	struct sfs_recent_blocks *r = recent_of(in);
	if (!r)
		return false;
	/* A load and a store, not an exchange (no locked instruction per
	 * write): writers that race here only blur the guess. */
	int64_t next = atomic_load_explicit(&r->next, memory_order_relaxed);
	atomic_store_explicit(&r->next, off + (int64_t)n, memory_order_relaxed);
	if (next == off)
		return false;
	uint64_t block = (uint64_t)off / SFS_BLOCK;
	bool hot = atomic_load_explicit(&r->tag[block % RECENT_SLOTS], memory_order_relaxed) ==
		   tag_of(block);
	note(r, off, n);
	if (hot)
		return false;
	sfs_stat_event(SFS_EV_cold_writes, 1);
	return true;
}

void sfs_cold_read(struct sfs_inode *in, int64_t off, size_t n)
{
	struct sfs_recent_blocks *r = atomic_load_explicit(&in->recent, memory_order_acquire);
	if (r && n > 0)
		note(r, off, n);
}

void sfs_cold_write_free(struct sfs_inode *in)
{
	free(atomic_exchange_explicit(&in->recent, NULL, memory_order_relaxed));
}
