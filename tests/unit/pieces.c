/* SPDX-License-Identifier: Apache-2.0 */
/* relink/pieces.c: the copy relink's pieces shrink one step after two
 * pieces in a row copied at under 2 GB/s (beyond 4 us a call), only below
 * the piece that was slow; the step stays only if its first MiB is twice as
 * fast a byte, else it is undone and held off; the pieces grow back one
 * step after a probe's worth of fast bytes, the probe doubling with each
 * shrink and forgotten after a clean GiB at the top. */
#include "../../src/relink/pieces.h"
#include "unit.h"

#define KiB ((int64_t)1 << 10)
#define MiB ((int64_t)1 << 20)
#define US ((int64_t)1000)
#define MS ((int64_t)1000 * 1000)

/* Writes bytes in fast pieces of size each (0.04 ns a byte, as measured). */
static void fast(struct sfs_pieces *p, int64_t size, int64_t bytes)
{
	for (int64_t done = 0; done < bytes; done += size)
		U_REQUIRE(!sfs_pieces_note(p, size, size / 25), "a fast piece lowers nothing");
}

/* Two slow pieces of size in a row (2.3 ns a byte): whether they lowered. */
static bool slow_twice(struct sfs_pieces *p, int64_t size)
{
	U_CHECK(!sfs_pieces_note(p, size, size * 23 / 10), "one slow piece lowers nothing");
	return sfs_pieces_note(p, size, size * 23 / 10);
}

/* Ends the trial of a lowered step with fast pieces of size. */
static void keep(struct sfs_pieces *p, int64_t size)
{
	fast(p, size, SFS_PIECE_TRIAL);
}

U_TEST(start, "a fresh state allows the ceiling, fast pieces keep it, the threshold")
{
	struct sfs_pieces p = {0};
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 2 * MiB, "2 MiB ceiling: 2 MiB");
	U_CHECK(sfs_pieces_size(&p, 256 * KiB) == 256 * KiB, "256 KiB ceiling: 256 KiB");
	fast(&p, 2 * MiB, 4096 * MiB);
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 2 * MiB, "4 GiB of fast pieces: still 2 MiB");
	/* 2 GB/s plus 4 us is not slow; a nanosecond more is. */
	U_CHECK(!sfs_pieces_note(&p, 2 * MiB, MiB + 4 * US), "2 MiB at the threshold");
	U_CHECK(!sfs_pieces_note(&p, 2 * MiB, MiB + 4 * US), "twice: not slow");
	U_CHECK(!sfs_pieces_note(&p, 2 * MiB, MiB + 4 * US + 1), "a ns more: slow once");
	U_CHECK(sfs_pieces_note(&p, 2 * MiB, MiB + 4 * US + 1), "slow twice: lowered");
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 256 * KiB, "to 256 KiB");
}

U_TEST(strike, "a slow piece between fast ones lowers nothing")
{
	struct sfs_pieces p = {0};
	for (int i = 0; i < 100; i++) {
		U_REQUIRE(!sfs_pieces_note(&p, 2 * MiB, 5 * MS), "slow");
		fast(&p, 2 * MiB, 2 * MiB);
	}
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 2 * MiB, "100 lone slow pieces: still 2 MiB");
	/* A slow piece too small to judge neither strikes nor clears. */
	U_REQUIRE(!sfs_pieces_note(&p, 2 * MiB, 5 * MS), "slow");
	U_REQUIRE(!sfs_pieces_note(&p, 100, 5 * MS), "100 bytes: not judged");
	U_CHECK(sfs_pieces_note(&p, 2 * MiB, 5 * MS), "the second judged slow piece lowers");
}

U_TEST(steps, "two slow pieces lower the limit one step, down to 4 KiB")
{
	struct sfs_pieces p = {0};
	U_CHECK(slow_twice(&p, 2 * MiB), "2 MiB pieces in 4.8 ms lower");
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 256 * KiB, "then 256 KiB");
	keep(&p, 256 * KiB);
	U_CHECK(slow_twice(&p, 256 * KiB), "256 KiB pieces in 0.6 ms lower");
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 64 * KiB, "then 64 KiB under a 2 MiB ceiling");
	U_CHECK(sfs_pieces_size(&p, 256 * KiB) == 64 * KiB, "and under a 256 KiB one");
	keep(&p, 64 * KiB);
	U_CHECK(slow_twice(&p, 64 * KiB), "64 KiB pieces in 150 us lower");
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 4 * KiB, "then 4 KiB");
	/* A page in 1-2 us is the page cache's normal speed: 2.4 us as
	 * measured where the larger pieces were slow, half their 2.3 ns a
	 * byte or less: kept. */
	for (int64_t done = 0; done < SFS_PIECE_TRIAL; done += 4 * KiB)
		U_REQUIRE(!sfs_pieces_note(&p, 4 * KiB, 2400), "a page in 2.4 us");
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 4 * KiB, "the 4 KiB step is kept");
	U_CHECK(!sfs_pieces_note(&p, 4 * KiB, 10 * US), "a page in 10 us: slow once");
	U_CHECK(!sfs_pieces_note(&p, 4 * KiB, 10 * US), "twice: nothing lower");
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 4 * KiB, "still 4 KiB");
}

U_TEST(trial, "a step down no faster a byte is undone, and no step down is tried for a hold")
{
	struct sfs_pieces p = {0};
	/* Every call slow by the same 150 us (a tracer): 256 KiB pieces
	 * over the threshold, 64 KiB ones four times slower a byte. */
	U_REQUIRE(!sfs_pieces_note(&p, 256 * KiB, 150 * US), "slow once");
	U_REQUIRE(sfs_pieces_note(&p, 256 * KiB, 150 * US), "slow twice: lowered");
	U_REQUIRE(sfs_pieces_size(&p, 256 * KiB) == 64 * KiB, "on trial at 64 KiB");
	for (int64_t done = 0; done < SFS_PIECE_TRIAL - 64 * KiB; done += 64 * KiB)
		U_REQUIRE(!sfs_pieces_note(&p, 64 * KiB, 150 * US), "a trial piece");
	U_CHECK(sfs_pieces_size(&p, 256 * KiB) == 64 * KiB, "a MiB less a piece: still on trial");
	U_CHECK(!sfs_pieces_note(&p, 64 * KiB, 150 * US), "the trial's last piece");
	U_CHECK(sfs_pieces_size(&p, 256 * KiB) == 256 * KiB, "no faster a byte: back to 256 KiB");
	/* Held off for 64 MiB of judged bytes. */
	for (int64_t done = 0; done < 64 * MiB - 256 * KiB; done += 256 * KiB)
		U_REQUIRE(!sfs_pieces_note(&p, 256 * KiB, 150 * US), "slow, but held");
	U_CHECK(sfs_pieces_size(&p, 256 * KiB) == 256 * KiB, "held for 64 MiB less a piece");
	U_CHECK(!sfs_pieces_note(&p, 256 * KiB, 150 * US), "the hold's last piece");
	U_CHECK(!sfs_pieces_note(&p, 256 * KiB, 150 * US), "slow once after the hold");
	U_CHECK(sfs_pieces_note(&p, 256 * KiB, 150 * US), "twice: lowered again");
	for (int64_t done = 0; done < SFS_PIECE_TRIAL; done += 64 * KiB)
		U_REQUIRE(!sfs_pieces_note(&p, 64 * KiB, 150 * US), "a trial piece");
	U_CHECK(sfs_pieces_size(&p, 256 * KiB) == 256 * KiB, "undone again");
	/* The second failed trial holds for 128 MiB. */
	for (int64_t done = 0; done < 128 * MiB - 256 * KiB; done += 256 * KiB)
		U_REQUIRE(!sfs_pieces_note(&p, 256 * KiB, 150 * US), "slow, but held");
	U_CHECK(!sfs_pieces_note(&p, 256 * KiB, 150 * US), "the hold's last piece");
	U_CHECK(!sfs_pieces_note(&p, 256 * KiB, 150 * US), "slow once");
	U_CHECK(sfs_pieces_note(&p, 256 * KiB, 150 * US), "lowered after 128 MiB");
	/* A step that is faster is kept, and forgets the holds. */
	keep(&p, 64 * KiB);
	U_CHECK(sfs_pieces_size(&p, 256 * KiB) == 64 * KiB, "fast at 64 KiB: kept");
}

U_TEST(judged, "pieces under a page are not judged; a short last piece counts at its step")
{
	struct sfs_pieces p = {0};
	for (int i = 0; i < 4; i++)
		U_CHECK(!sfs_pieces_note(&p, 4 * KiB - 1, 10 * MS),
			"a piece under a page, however slow");
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 2 * MiB, "the limit did not move");
	/* A window's last 100 KiB, cut under a 256 KiB limit. */
	U_CHECK(slow_twice(&p, 100 * KiB), "slow 100 KiB pieces lower");
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 64 * KiB, "below their step (256 KiB): 64 KiB");
}

U_TEST(stale, "slow pieces larger than the limit, cut before it moved, lower nothing more")
{
	struct sfs_pieces p = {0};
	U_REQUIRE(slow_twice(&p, 256 * KiB), "256 KiB slow");
	U_REQUIRE(sfs_pieces_size(&p, 2 * MiB) == 64 * KiB, "64 KiB");
	U_CHECK(!slow_twice(&p, 2 * MiB), "another relink's 2 MiB pieces");
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 64 * KiB, "the limit stays at 64 KiB");
	/* On trial, pieces of another step are not counted: the trial's
	 * fast MiB counts as clean, and 64 MiB of them raise the limit. */
	fast(&p, 64 * KiB, 64 * MiB - 64 * KiB);
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 64 * KiB, "64 MiB less a piece: not yet up");
	fast(&p, 64 * KiB, 64 * KiB);
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 256 * KiB, "64 MiB clean: one step up");
}

U_TEST(probe, "the probe doubles with each lowering, up to 1 GiB, and a clean GiB forgets it")
{
	struct sfs_pieces p = {0};
	U_REQUIRE(slow_twice(&p, 2 * MiB), "lowered to 256 KiB");
	fast(&p, 256 * KiB, 64 * MiB);
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 2 * MiB, "back to 2 MiB after 64 MiB");
	U_REQUIRE(slow_twice(&p, 2 * MiB), "lowered again");
	fast(&p, 256 * KiB, 64 * MiB);
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 256 * KiB, "the second time 64 MiB is not enough");
	fast(&p, 256 * KiB, 64 * MiB);
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 2 * MiB, "128 MiB is");
	/* The third lowering: 256 MiB, then 512 MiB, then 1 GiB from the
	 * fifth on. */
	for (int k = 3; k <= 7; k++) {
		int64_t probe = k >= 5 ? 1024 * MiB : (64 * MiB) << (k - 1);
		U_REQUIRE(slow_twice(&p, 2 * MiB), "lowered, time %d", k);
		fast(&p, 256 * KiB, probe - 256 * KiB);
		U_REQUIRE(sfs_pieces_size(&p, 2 * MiB) == 256 * KiB,
			  "time %d: not up before the probe", k);
		fast(&p, 256 * KiB, 256 * KiB);
		U_REQUIRE(sfs_pieces_size(&p, 2 * MiB) == 2 * MiB, "time %d: up at the probe", k);
	}
	fast(&p, 2 * MiB, 1024 * MiB);
	U_REQUIRE(slow_twice(&p, 2 * MiB), "lowered after a clean GiB at the top");
	fast(&p, 256 * KiB, 64 * MiB);
	U_CHECK(sfs_pieces_size(&p, 2 * MiB) == 2 * MiB, "the probe is 64 MiB again");
}
