/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the space reservation of staged appends
 * (src/staging/reserve.c) against a model file system of a fixed size:
 * each shard takes from a file of its own, a step ahead; a full file system
 * makes every shard give back what it does not owe before a take fails, so
 * that ENOSPC comes only when the owed bytes fill it; gives go back to the
 * shard they came from; a file system without fallocate reserves nothing.
 * reserve.o is linked alone: this program defines what it reads from the
 * rest of the library, with sfs_real.openat and sfs_real.fallocate the
 * model's. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>

#include "../../src/staging/reserve.h"
#include "../../src/sys/global.h"
#include "../../src/sys/real.h"
#include "../../src/sys/self.h"
#include "../../src/util/signals.h"
#include "unit.h"

struct sfs_global sfs_g;
struct sfs_real_table sfs_real;
/* Every real function the module calls is the test's. */
void *sfs_real_lookup(enum sfs_real_row row)
{
	(void)row;
	abort();
}
__thread int sfs_busy;
__thread int sfs_deferred;
void sfs_run_deferred(void)
{
}
int sfs_internal_fd(int fd)
{
	return fd;
}
int sfs_privdir(void)
{
	return -1; /* the model's openat takes any directory */
}

#define KIB (1L << 10)
#define MIB (1L << 20)
#define FIRST_FD 100
#define MAX_FILES 32

/* The model: capacity bytes, of which each reserve file holds held[]. */
static long capacity, used, held[MAX_FILES];
static int files, closed;
static int fail_with; /* set: fallocate fails with it (no fallocate here) */

void sfs_internal_close(int fd)
{
	used -= held[fd - FIRST_FD];
	held[fd - FIRST_FD] = 0;
	closed++;
}

static int model_openat(int dirfd, const char *path, int flags, ...)
{
	(void)dirfd;
	(void)path;
	(void)flags;
	return files < MAX_FILES ? FIRST_FD + files++ : -1;
}

static int model_fallocate(int fd, int mode, off_t off, off_t len)
{
	(void)off;
	if (fail_with) {
		errno = fail_with;
		return -1;
	}
	long *h = &held[fd - FIRST_FD];
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		*h -= len;
		used -= len;
		return 0;
	}
	if (used + len > capacity) {
		errno = ENOSPC;
		return -1;
	}
	*h += len;
	used += len;
	return 0;
}

/* A fresh model of cap bytes, and the reservation emptied (as in a child). */
static void model(long cap)
{
	sfs_real.openat = model_openat;
	sfs_real.fallocate = model_fallocate;
	sfs_reserve_reset_child();
	for (int i = 0; i < MAX_FILES; i++)
		held[i] = 0;
	capacity = cap;
	used = files = closed = fail_with = 0;
}

U_TEST(shards_apart, "each shard reserves in a file of its own, a step ahead; gives go to it")
{
	model(64 * MIB);
	U_CHECK(sfs_reserve_take(0, 64 * KIB) == 0, "take");
	U_CHECK(sfs_reserve_take(1, 64 * KIB) == 0, "take");
	U_CHECK(files == 2, "%d reserve files", files);
	U_CHECK(held[0] == MIB && held[1] == MIB, "held %ld, %ld", held[0], held[1]);
	U_CHECK(sfs_reserve_take(1 + SFS_RESERVE_SHARDS, 2 * MIB) == 0, "take (shard 1 again)");
	U_CHECK(files == 2 && held[1] == 2 * MIB + 64 * KIB, "%d files, held %ld", files, held[1]);
	sfs_reserve_give(0, 64 * KIB); /* relinked: what it needs is freed */
	U_CHECK(held[0] == MIB - 64 * KIB && held[1] == 2 * MIB + 64 * KIB, "held %ld, %ld",
		held[0], held[1]);
}

U_TEST(full_trims_others, "a full file system: the other shards give back their steps ahead")
{
	model(MIB + 512 * KIB);
	U_CHECK(sfs_reserve_take(0, 64 * KIB) == 0, "take");
	U_CHECK(held[0] == MIB, "held %ld", held[0]);
	/* Neither a step nor 640 KiB fits beside shard 0's step; beside what
	 * it owes, both do. */
	U_CHECK(sfs_reserve_take(1, 640 * KIB) == 0, "take beside another shard's step");
	U_CHECK(held[0] == 64 * KIB, "shard 0 holds %ld, owes 64 KiB", held[0]);
	U_CHECK(held[1] >= 640 * KIB, "shard 1 holds %ld", held[1]);
	U_CHECK(used <= capacity, "used %ld", used);
}

U_TEST(enospc_when_owed, "ENOSPC when the bytes owed fill the file system, nothing held above")
{
	model(MIB);
	U_CHECK(sfs_reserve_take(0, 512 * KIB) == 0, "take");
	U_CHECK(sfs_reserve_take(1, 640 * KIB) == -ENOSPC, "take past the capacity");
	U_CHECK(held[0] == 512 * KIB && held[1] == 0, "held %ld, %ld: only what is owed", held[0],
		held[1]);
	U_CHECK(sfs_reserve_take(1, 512 * KIB) == 0, "what is left still fits");
	sfs_reserve_give(0, 512 * KIB);
	U_CHECK(held[0] == 0, "shard 0 holds %ld after giving all back", held[0]);
}

U_TEST(no_fallocate, "a file system without fallocate reserves nothing and never fails a take")
{
	model(MIB);
	fail_with = EOPNOTSUPP;
	U_CHECK(sfs_reserve_take(0, 64 * KIB) == 0, "take");
	U_CHECK(sfs_reserve_take(3, 4 * MIB) == 0, "take past the capacity");
	U_CHECK(used == 0, "used %ld", used);
}

U_TEST(child_starts_empty, "a forked child closes the parent's reserve files and starts anew")
{
	model(64 * MIB);
	U_CHECK(sfs_reserve_take(0, 64 * KIB) == 0 && sfs_reserve_take(5, 64 * KIB) == 0, "take");
	sfs_reserve_reset_child();
	U_CHECK(closed == 2 && used == 0, "closed %d, used %ld", closed, used);
	U_CHECK(sfs_reserve_take(0, 64 * KIB) == 0 && files == 3, "a new file: %d", files);
}
