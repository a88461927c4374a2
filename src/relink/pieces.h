/* SPDX-License-Identifier: Apache-2.0 */
/* The size of the pieces the copy relink writes a window in, adapted to
 * how fast the page cache takes them.
 *
 * The page cache sizes a write's folios by the write (relink/copy.c): large
 * pieces make large folios, one mapping fault a folio for a later reader.
 * But a large folio needs a free block of its size, and where the host
 * takes back free memory (util/pagereport.h) those blocks are the ones it
 * took: each store into them faults in the host. 1 GiB appended in 4 KiB
 * writes, then relinked (bench/results/2026-12-01-pieces-host/): a 256 KiB
 * piece copies in ~10 us (0.04 ns a byte), but in some runs a third of them,
 * most 2 MiB pieces and up to two thirds of 64 KiB or 16 KiB ones at ~2.3 ns
 * a byte; 4 KiB pieces (single pages, which the kernel's own 4 KiB writes
 * get too) did not, at a call each.
 *
 * So two pieces in a row copied at under 2 GB/s (beyond 4 us for the
 * call) lower the largest piece allowed one step: 2 MiB, 256 KiB, 64 KiB,
 * 4 KiB. The step is a trial: it stays only if its first MiB copies at
 * least twice as fast a byte as the slow pieces did. Otherwise the slowness
 * was not the blocks' (every call slow: a tracer, a writer throttled by
 * writeback, where smaller pieces only make more calls), the limit goes
 * back up, and no step down is tried for a hold of judged bytes (64 MiB,
 * doubling with each failed trial, up to 1 GiB). After a probe's worth of
 * bytes copied without a slow piece the limit goes one step up again; each
 * kept lowering doubles the probe (64 MiB up to 1 GiB), so a host that
 * stays slow costs two slow pieces a GiB, and a clean GiB at the top
 * forgets the doubling.
 *
 * One state a process, updated without a lock: relinks running at once
 * may each miss a piece the other counted. The state is a hint; every
 * piece size is correct. */
#ifndef SFS_RELINK_PIECES_H
#define SFS_RELINK_PIECES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define SFS_PIECE_STEPS 4 /* 2 MiB, 256 KiB, 64 KiB, 4 KiB */
/* Pieces smaller than a page (a window's odd end) are not judged. */
#define SFS_PIECE_JUDGED ((int64_t)4096)
#define SFS_PIECE_PROBE_FIRST ((int64_t)64 << 20)
#define SFS_PIECE_PROBE_MAX ((int64_t)1 << 30)
#define SFS_PIECE_TRIAL ((int64_t)1 << 20) /* judged bytes a lowered step is tried on */

struct sfs_pieces {
	_Atomic int limit;     /* the largest size allowed: a step, 0 = 2 MiB */
	_Atomic bool strike;   /* the last judged piece was slow */
	_Atomic int64_t clean; /* judged bytes copied fast since the last change */
	_Atomic int64_t probe; /* clean bytes before a step up; 0: not lowered lately */
	_Atomic bool trial;    /* the limit was just lowered: is its step faster? */
	_Atomic int64_t above; /* ns a KiB of the slow piece that lowered it */
	_Atomic int64_t trial_bytes, trial_ns; /* judged at the lowered step so far */
	_Atomic int64_t hold;		       /* judged bytes before a step down may be tried */
	_Atomic int64_t hold_next;	       /* the hold after the next failed trial; 0: first */
};

/* The piece size to write next: ceiling (2 MiB or 256 KiB) or smaller. */
int64_t sfs_pieces_size(struct sfs_pieces *p, int64_t ceiling);

/* A piece of bytes took ns to write: true when that lowered the limit. */
bool sfs_pieces_note(struct sfs_pieces *p, int64_t bytes, int64_t ns);

#endif
