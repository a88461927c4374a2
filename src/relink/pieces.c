/* SPDX-License-Identifier: Apache-2.0 */
#include "pieces.h"

static const int64_t sizes[SFS_PIECE_STEPS] = {(int64_t)2 << 20, (int64_t)256 << 10,
					       (int64_t)64 << 10, (int64_t)4 << 10};

/* The step of a ceiling: the first size not above it. */
static int step_of_ceiling(int64_t size)
{
	int i = 0;
	while (i < SFS_PIECE_STEPS - 1 && sizes[i] > size)
		i++;
	return i;
}

/* The step a piece was written at: the last size not below it (a window's
 * last piece may be shorter than the size it was cut by). */
static int step_of_piece(int64_t bytes)
{
	int i = SFS_PIECE_STEPS - 1;
	while (i > 0 && sizes[i] < bytes)
		i--;
	return i;
}

int64_t sfs_pieces_size(struct sfs_pieces *p, int64_t ceiling)
{
	int limit = atomic_load_explicit(&p->limit, memory_order_relaxed);
	int i = step_of_ceiling(ceiling);
	return sizes[limit > i ? limit : i];
}

/* Slower than 2 bytes a nanosecond (2 GB/s) beyond 4 us for the call: a
 * piece into memory at hand copies at tens of GB/s (a 4 KiB pwrite ~1 us),
 * one into blocks the host took back at under 0.5. */
static bool slow(int64_t bytes, int64_t ns)
{
	return ns > bytes / 2 + 4000;
}

/* The next probe or hold after x (0: none yet): twice x, up to the most. */
static int64_t doubled(int64_t x)
{
	x = x ? 2 * x : SFS_PIECE_PROBE_FIRST;
	return x < SFS_PIECE_PROBE_MAX ? x : SFS_PIECE_PROBE_MAX;
}

/* A piece of the step on trial: ends the trial once it has a MiB. */
static void try_step(struct sfs_pieces *p, int limit, int64_t bytes, int64_t ns)
{
	int64_t tb =
		atomic_fetch_add_explicit(&p->trial_bytes, bytes, memory_order_relaxed) + bytes;
	int64_t tn = atomic_fetch_add_explicit(&p->trial_ns, ns, memory_order_relaxed) + ns;
	if (tb < SFS_PIECE_TRIAL ||
	    !atomic_exchange_explicit(&p->trial, false, memory_order_relaxed))
		return;
	if (2 * (tn * 1024 / tb) <= atomic_load_explicit(&p->above, memory_order_relaxed)) {
		/* Kept: its bytes were fast, and count as clean. */
		atomic_store_explicit(&p->hold_next, 0, memory_order_relaxed);
		atomic_store_explicit(&p->clean, tb, memory_order_relaxed);
		return;
	}
	int64_t h = doubled(atomic_load_explicit(&p->hold_next, memory_order_relaxed));
	atomic_store_explicit(&p->hold_next, h, memory_order_relaxed);
	atomic_store_explicit(&p->hold, h, memory_order_relaxed);
	atomic_store_explicit(&p->clean, 0, memory_order_relaxed);
	atomic_store_explicit(&p->limit, limit - 1, memory_order_relaxed);
}

bool sfs_pieces_note(struct sfs_pieces *p, int64_t bytes, int64_t ns)
{
	if (bytes < SFS_PIECE_JUDGED)
		return false;
	int limit = atomic_load_explicit(&p->limit, memory_order_relaxed);
	if (atomic_load_explicit(&p->trial, memory_order_relaxed)) {
		/* Only pieces of the step on trial say how fast it is. */
		if (step_of_piece(bytes) == limit)
			try_step(p, limit, bytes, ns);
		return false;
	}
	bool held = atomic_load_explicit(&p->hold, memory_order_relaxed) > 0;
	if (held)
		atomic_fetch_sub_explicit(&p->hold, bytes, memory_order_relaxed);
	if (slow(bytes, ns)) {
		atomic_store_explicit(&p->clean, 0, memory_order_relaxed);
		if (held)
			return false;
		/* One slow piece may be a preemption; two in a row are not. */
		if (!atomic_exchange_explicit(&p->strike, true, memory_order_relaxed))
			return false;
		atomic_store_explicit(&p->strike, false, memory_order_relaxed);
		/* One step below the piece just written. Nothing when the limit
		 * is there already: a piece cut before another thread lowered
		 * it, or one at the smallest size. */
		int next = step_of_piece(bytes) + 1;
		if (next >= SFS_PIECE_STEPS || next <= limit)
			return false;
		atomic_store_explicit(
			&p->probe, doubled(atomic_load_explicit(&p->probe, memory_order_relaxed)),
			memory_order_relaxed);
		atomic_store_explicit(&p->above, ns * 1024 / bytes, memory_order_relaxed);
		atomic_store_explicit(&p->trial_bytes, 0, memory_order_relaxed);
		atomic_store_explicit(&p->trial_ns, 0, memory_order_relaxed);
		atomic_store_explicit(&p->trial, true, memory_order_relaxed);
		atomic_store_explicit(&p->limit, next, memory_order_relaxed);
		return true;
	}
	atomic_store_explicit(&p->strike, false, memory_order_relaxed);
	int64_t clean = atomic_fetch_add_explicit(&p->clean, bytes, memory_order_relaxed) + bytes;
	int64_t probe = atomic_load_explicit(&p->probe, memory_order_relaxed);
	if (limit > 0 && clean >= probe) {
		atomic_store_explicit(&p->limit, limit - 1, memory_order_relaxed);
		atomic_store_explicit(&p->clean, 0, memory_order_relaxed);
	} else if (limit == 0 && probe && clean >= SFS_PIECE_PROBE_MAX) {
		atomic_store_explicit(&p->probe, 0, memory_order_relaxed);
	}
	return false;
}
