/* SPDX-License-Identifier: Apache-2.0 */
/* Without DAX, the first store to a clean page of a shared mapping takes a
 * write fault: the kernel's page_mkwrite (XFS: timestamps, the extent
 * lookup, the folio marked dirty), 1.5-2.5 us here, more than the 4 KiB
 * pwrite it replaces (about 1.2 us). How many pages one fault makes
 * writable depends on what the mapping holds there (Linux 6.18, measured
 * with a 64 MiB file whose page cache holds folios of the size each row
 * says, bench/results/2026-11-28-ahead-host):
 *
 * - a page mapped read-only (after a read through the mapping, or after
 *   writeback write-protected it: every fsync) takes a fault of its own,
 *   4 KiB at a time, whatever the folio's size;
 * - a page not mapped at all faults the whole folio in, writable, at once
 *   (finish_fault maps every page of a large folio that lies in the
 *   mapping and whose entries are all empty): one fault per 64 KiB to
 *   2 MiB.
 *
 * So a sequential overwriter first unmaps (MADV_DONTNEED: the page cache
 * and its dirty bits stay, only this process's page-table entries go) the
 * rest of each 2 MiB region, the largest folio XFS makes, as it enters it,
 * and lets its stores fault whole folios back. The library's own appends
 * relink in 2 MiB pieces, or 256 KiB where the host takes back free
 * memory (relink/copy.c), and readahead makes large
 * folios too, so this is the usual case.
 *
 * Where the page cache holds 4 KiB folios (a file the kernel wrote 4 KiB at
 * a time), an unmapped page costs a full fault, more than a write-protect
 * one, and every page faults on its own whatever is done ahead. Which case
 * a file is in is measured: the first 64 KiB of a region is populated
 * right after the unmap and its faults counted (one per folio); two
 * regions in a row of 4 KiB folios switch the file to its small-folio
 * policy for good. There, the first write of a page since the last
 * writeback is a pwrite (4 KiB: 1.1 us here, against 1.6-1.7 us for the
 * store's fault and copy), and its later writes are stores (the first of
 * them faults, 1.3 us; the rest cost a copy): a page written once costs
 * the kernel's pwrite, a page written often costs one pwrite and one fault
 * more than stores alone. A sequential run of pieces smaller than a page
 * instead makes the pages writable 64 KiB ahead of the writer in one
 * madvise(MADV_POPULATE_WRITE), which saves the traps.
 *
 * Only sequential writers: a random writer would dirty pages it never
 * writes, and fsync would write them back. Not on DAX (the callers check):
 * there a populate costs what the faults it saves cost (lab guest: 6.3-9.8
 * us a 4 KiB page either way), and a 2 MiB-aligned extent takes one fault
 * for 2 MiB (README, "Persistent memory"). */
#define _GNU_SOURCE
#include "ahead.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "../sys/global.h"
#include "../util/compiler.h"
#include "../util/stats.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define PAGE ((int64_t)4096)
#define REGION ((int64_t)2 << 20) /* XFS's largest folio (PMD size) */
#define AHEAD ((int64_t)64 << 10)
#define SMALL_PROBES 2

/* Calls madvise(advice) over the target's [from, to), a chunk mapping at a
 * time (an unmap skips chunks not mapped: nothing there to unmap). false
 * when a chunk could not be mapped or the call failed (the stores then
 * fault as they would have). */
static bool advise_range(struct sfs_inode *in, int64_t from, int64_t to, int advice)
{
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	for (int64_t len; from < to; from += len) {
		len = SFS_MIN(to - from, chunk - (from & (chunk - 1)));
		int err;
		char *m = advice == MADV_DONTNEED ?
				  sfs_map_mapped(&in->maps, (uint64_t)from) :
				  sfs_map_get(&in->maps, in->kfd, (uint64_t)from,
					      PROT_READ | PROT_WRITE, false, &err);
		if (!m && advice == MADV_DONTNEED)
			continue;
		if (!m || madvise(m + (from & (chunk - 1)), (size_t)len, advice) != 0)
			return false;
	}
	return true;
}

static long thread_faults(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_minflt : -1;
}

/* Populates the AHEAD bytes at `at` (AHEAD-aligned, just unmapped, below
 * the end of file) and counts their faults: one per folio. Two probes in a
 * row that find 4 KiB folios switch the file to populating ahead for good
 * (a file's head is often in small folios when the rest is not: its first
 * writes were small). true when this probe did. */
static bool probe_small(struct sfs_inode *in, int64_t at)
{
	long before = thread_faults();
	if (before < 0 || !advise_range(in, at, at + AHEAD, MADV_POPULATE_WRITE))
		return false;
	if (thread_faults() - before <= AHEAD / PAGE / 2) {
		atomic_store_explicit(&in->small_probes, 0, memory_order_relaxed);
		return false;
	}
	if (atomic_fetch_add_explicit(&in->small_probes, 1, memory_order_relaxed) + 1 <
	    SMALL_PROBES)
		return false;
	sfs_stat_event(SFS_EV_ahead_small_folios, 1);
	return true;
}

/* A chunk's word (sfs_map_word): the write-back epoch it was last seen in,
 * shifted by 2, or'ed with SEEN (one scattered overwrite in that epoch) or
 * UNMAPPED (two: the chunk was unmapped). */
#define SEEN 1u
#define UNMAPPED 2u

static uint32_t epoch_of(struct sfs_inode *in)
{
	return atomic_load_explicit(&in->wb_epoch, memory_order_relaxed) << 2;
}

/* Marks the chunks of [from, to) unmapped in this epoch: a scattered
 * overwrite there then unmaps nothing again. */
static void mark_unmapped(struct sfs_inode *in, int64_t from, int64_t to)
{
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	for (int64_t at = from; at < to; at = SFS_ALIGN_DOWN(at, chunk) + chunk) {
		_Atomic uint32_t *word = sfs_map_word(&in->maps, (uint64_t)at);
		if (word)
			atomic_store_explicit(word, epoch_of(in) | UNMAPPED, memory_order_relaxed);
	}
}

void sfs_write_ahead(struct sfs_inode *in, int64_t off, int64_t end, int64_t limit)
{
	int64_t done = atomic_load_explicit(&in->t_populated, memory_order_relaxed);
	if (end <= done)
		return;
	int64_t from = SFS_MAX(done, SFS_ALIGN_DOWN(off, PAGE));
	int64_t lim = SFS_ALIGN_UP(limit, PAGE);
	if (atomic_load_explicit(&in->small_probes, memory_order_relaxed) >= SMALL_PROBES) {
		int64_t to = SFS_MIN(SFS_ALIGN_UP(end + AHEAD, PAGE), lim);
		atomic_store_explicit(&in->t_populated, to, memory_order_relaxed);
		advise_range(in, from, to, MADV_POPULATE_WRITE);
		return;
	}
	/* The frontier moves a region at a time: the stores fault the rest. */
	int64_t to = SFS_MIN(SFS_ALIGN_UP(end, REGION), lim);
	atomic_store_explicit(&in->t_populated, to, memory_order_relaxed);
	if (from >= to || !advise_range(in, from, to, MADV_DONTNEED))
		return;
	mark_unmapped(in, from, to);
	sfs_stat_event(SFS_EV_ahead_unmaps, 1);
	/* The probe: only from a region's start, where no folio began before
	 * the unmapped range (one that did would fault a page at a time). */
	if ((from & (REGION - 1)) || to - from < AHEAD)
		return;
	if (probe_small(in, from))
		/* Populated ahead from here on, this region included. */
		atomic_store_explicit(&in->t_populated, from + AHEAD, memory_order_relaxed);
}

void sfs_write_scattered(struct sfs_inode *in, int64_t off, int64_t limit)
{
	if (atomic_load_explicit(&in->small_probes, memory_order_relaxed) >= SMALL_PROBES)
		return;
	_Atomic uint32_t *word = sfs_map_word(&in->maps, (uint64_t)off);
	if (!word)
		return;
	uint32_t epoch = epoch_of(in);
	uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);
	if (seen == (epoch | UNMAPPED))
		return;
	if (seen != (epoch | SEEN)) {
		atomic_store_explicit(word, epoch | SEEN, memory_order_relaxed);
		return;
	}
	if (!atomic_compare_exchange_strong_explicit(word, &seen, epoch | UNMAPPED,
						     memory_order_relaxed, memory_order_relaxed))
		return;
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	int64_t from = SFS_ALIGN_DOWN(off, chunk);
	int64_t to = SFS_MIN(from + chunk, SFS_ALIGN_UP(limit, PAGE));
	if (from >= to || !advise_range(in, from, to, MADV_DONTNEED))
		return;
	sfs_stat_event(SFS_EV_ahead_unmaps, 1);
	int64_t at = SFS_ALIGN_DOWN(off, AHEAD);
	if (at + AHEAD <= to)
		probe_small(in, at);
}

void sfs_write_ahead_reset(struct sfs_inode *in)
{
	atomic_store_explicit(&in->t_populated, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&in->wb_epoch, 1, memory_order_relaxed);
}

/* Pages of a file in 4 KiB folios written since the last writeback: a
 * direct-mapped table of tags (the page's index and the write-back epoch,
 * 0: empty), indexed by the page's index. A tag lost to a collision or to
 * an epoch that wrapped costs a pwrite or a fault, never a wrong byte:
 * both ways of writing are coherent with the mappings (one page cache).
 * 4,096 tags (32 KiB) cover a 16 MiB stretch written between two syncs. */
#define WRITTEN_SLOTS 4096u
#define EPOCH_BITS 13
struct sfs_written_pages {
	_Atomic uint64_t tag[WRITTEN_SLOTS];
};

/* Offsets are below 2^63, so a page index (< 2^51) and the epoch fit. */
static uint64_t page_tag(int64_t page, uint32_t epoch)
{
	return ((uint64_t)page << EPOCH_BITS | (epoch & ((1u << EPOCH_BITS) - 1))) + 1;
}

static bool small_folios(const struct sfs_inode *in)
{
	return atomic_load_explicit(&in->small_probes, memory_order_relaxed) >= SMALL_PROBES;
}

bool sfs_write_by_kernel(struct sfs_inode *in, int64_t off, size_t n, bool sequential)
{
	/* A sequential run of pieces smaller than a page is cheaper populated
	 * ahead (one trap-free mkwrite a page) than a pwrite and then a fault
	 * per page. */
	if (n == 0 || !small_folios(in) || (sequential && n < (size_t)PAGE))
		return false;
	struct sfs_written_pages *w = atomic_load_explicit(&in->written, memory_order_acquire);
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return false; /* only faults then */
		struct sfs_written_pages *none = NULL;
		if (!atomic_compare_exchange_strong(&in->written, &none, w)) {
			free(w);
			w = none;
		}
	}
	uint32_t epoch = atomic_load_explicit(&in->wb_epoch, memory_order_relaxed);
	bool unwritten = false;
	for (int64_t page = off / PAGE, last = (off + (int64_t)n - 1) / PAGE; page <= last;
	     page++) {
		_Atomic uint64_t *slot = &w->tag[(uint64_t)page % WRITTEN_SLOTS];
		uint64_t tag = page_tag(page, epoch);
		if (atomic_load_explicit(slot, memory_order_relaxed) != tag) {
			atomic_store_explicit(slot, tag, memory_order_relaxed);
			unwritten = true;
		}
	}
	if (unwritten)
		sfs_stat_event(SFS_EV_small_folio_pwrites, 1);
	return unwritten;
}

void sfs_write_ahead_free(struct sfs_inode *in)
{
	free(atomic_exchange_explicit(&in->written, NULL, memory_order_relaxed));
}
