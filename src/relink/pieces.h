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
 * So two pieces in a row copied at under 2 GB/s (beyond the call's own few
 * us) lower the largest piece allowed one step: 2 MiB, 256 KiB, 64 KiB,
 * 4 KiB. After a probe's worth of bytes copied without a slow piece the
 * limit goes one step up again; each lowering doubles the probe (64 MiB up
 * to 1 GiB), so a host that stays slow costs two slow pieces a GiB, and a
 * clean GiB at the top forgets the doubling.
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

struct sfs_pieces {
	_Atomic int limit;     /* the largest size allowed: a step, 0 = 2 MiB */
	_Atomic bool strike;   /* the last judged piece was slow */
	_Atomic int64_t clean; /* judged bytes copied fast since the last change */
	_Atomic int64_t probe; /* clean bytes before a step up; 0: not lowered lately */
};

/* The piece size to write next: ceiling (2 MiB or 256 KiB) or smaller. */
int64_t sfs_pieces_size(struct sfs_pieces *p, int64_t ceiling);

/* A piece of bytes took ns to write: true when that lowered the limit. */
bool sfs_pieces_note(struct sfs_pieces *p, int64_t bytes, int64_t ns);

#endif
