/* SPDX-License-Identifier: Apache-2.0 */
/* Description: overwrites that the library copies with non-temporal stores
 * (fs/coldwrite.h: scattered whole-block overwrites of a file larger than
 * SPLITFS_COLD_MIN), and those around them that it copies as before: each
 * block of a 6 MiB file once in a shuffled order, then pieces of 4 KiB to
 * 12 KiB at offsets and lengths that are not multiples of a line, one block
 * again and again (taken as cached after its first write), and a
 * sequential run. A child (this program again, t_run_self) writes with
 * SPLITFS_COLD_MIN=1M and statistics on, and reads every piece back as it
 * goes, and overwrites one block from a buffer that faults halfway (the
 * kernel's short write or EFAULT); the file must then hold exactly what
 * the writes wrote, read
 * through the library and with the kernel's own read. In POSIX mode some
 * writes must have taken the non-temporal copy (cold_writes; not on DAX,
 * where stores go to pmem by their own copy). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define BLOCK 4096
#define BLOCKS 1536 /* 6 MiB */
#define SIZE ((long)BLOCKS * BLOCK)
#define PIECES 400
#define HOT_WRITES 50

static uint32_t rnd_state;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* One write of n bytes at off, stream seed: into the model, and (fd >= 0)
 * into the file, read back at once through the same descriptor. false
 * when the write or the read back fails. */
static bool put(int fd, unsigned char *model, long off, size_t n, unsigned seed)
{
	t_fill(model + off, n, seed, off);
	if (fd < 0)
		return true;
	static unsigned char back[3 * BLOCK + 64];
	if (pwrite(fd, model + off, n, off) != (ssize_t)n || pread(fd, back, n, off) != (ssize_t)n)
		return false;
	return memcmp(back, model + off, n) == 0;
}

/* Every write of the test in order; fd < 0: the model only. */
static bool run_writes(int fd, unsigned char *model)
{
	static long order[BLOCKS];
	rnd_state = 7;
	for (long i = 0; i < BLOCKS; i++)
		order[i] = i;
	for (long i = BLOCKS - 1; i > 0; i--) {
		long j = (long)(rnd() % (uint32_t)(i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	unsigned seed = 1;
	for (long i = 0; i < BLOCKS; i++) /* scattered whole blocks */
		if (!put(fd, model, order[i] * BLOCK, BLOCK, seed++))
			return false;
	for (int i = 0; i < PIECES; i++) { /* ragged pieces */
		size_t n = BLOCK + rnd() % (2 * BLOCK);
		long off = (long)(rnd() % (uint32_t)(SIZE - (long)n));
		if (!put(fd, model, off, n, seed++))
			return false;
	}
	for (int i = 0; i < HOT_WRITES; i++) /* one block, often */
		if (!put(fd, model, 100 * BLOCK + 8, BLOCK, seed++))
			return false;
	for (long at = SIZE / 2; at < SIZE / 2 + 64 * BLOCK; at += BLOCK) /* in order */
		if (!put(fd, model, at, BLOCK, seed++))
			return false;
	return true;
}

static int child(const char *dir)
{
	int fd = open(t_path(dir, "cold.dat"), O_RDWR);
	if (fd < 0)
		return 3;
	unsigned char *model = malloc(SIZE), *all;
	if (!model || pread(fd, model, SIZE, 0) != SIZE)
		return 4;
	/* First (no block is remembered as written yet), a scattered
	 * overwrite from a buffer whose second page faults: the kernel's
	 * answer (a short write or EFAULT), the bytes before the fault in the
	 * file, the rest unchanged; then the model's bytes back. */
	char *pages =
		mmap(NULL, 2 * BLOCK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED || mprotect(pages + BLOCK, BLOCK, PROT_NONE) != 0)
		return 8;
	memset(pages, 0x5a, BLOCK);
	long at = 1000L * BLOCK;
	unsigned char back[2 * BLOCK];
	/* Reads first: the library takes the file over from the kernel after
	 * a few calls (fs/fdtable.h: pending descriptors) and maps a chunk
	 * after a few touches (map/maptab.h). */
	for (int i = 0; i < 64; i++)
		if (pread(fd, back, 2 * BLOCK, at) != 2 * BLOCK)
			return 8;
	ssize_t r = pwrite(fd, pages, 2 * BLOCK, at);
	if (!(r == BLOCK || (r < 0 && errno == EFAULT)))
		return 9;
	if (pread(fd, back, 2 * BLOCK, at) != 2 * BLOCK ||
	    (r == BLOCK && memcmp(back, pages, BLOCK) != 0) ||
	    memcmp(back + BLOCK, model + at + BLOCK, BLOCK) != 0 ||
	    pwrite(fd, model + at, 2 * BLOCK, at) != 2 * BLOCK)
		return 10;
	if (!run_writes(fd, model))
		return 5;
	/* The whole file through the library, before its close. */
	long n = t_read_fd(fd, &all, &(long){0});
	bool same = n == SIZE && memcmp(all, model, SIZE) == 0;
	free(all);
	free(model);
	return !same ? 6 : close(fd) != 0 ? 7 : 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	if (getenv("COLD_OVERWRITE_ROLE"))
		return child(dir);
	const char *mode = getenv("SPLITFS_MODE");
	unsigned char *model = malloc(SIZE);
	T_REQUIRE(model != NULL, "memory");
	t_fill(model, SIZE, 0, 0);
	int w = open(t_path(dir, "cold.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(w >= 0 && write(w, model, SIZE) == SIZE && fsync(w) == 0 && close(w) == 0,
		  "the file");
	char stats[PATH_MAX];
	snprintf(stats, sizeof(stats), "%s/cold.stats", dir);
	unlink(stats);
	const char *env[] = {"COLD_OVERWRITE_ROLE",
			     "1",
			     "SPLITFS_COLD_MIN",
			     "1M",
			     "SPLITFS_STATS",
			     "1",
			     "SPLITFS_STATS_FILE",
			     stats,
			     NULL};
	int st = t_run_self(dir, env, NULL);
	T_REQUIRE(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the child wrote and read back what it wrote (status 0x%x)", st);
	T_REQUIRE(run_writes(-1, model), "the model");
	unsigned char *data;
	long n = t_read_kernel(t_path(dir, "cold.dat"), &data);
	T_REQUIRE(n == SIZE, "size %ld", n);
	long bad = -1;
	for (long i = 0; i < SIZE && bad < 0; i++)
		if (data[i] != model[i])
			bad = i;
	T_CHECK(bad < 0, "the kernel reads byte %ld other than the last write there", bad);
	free(data);
	free(model);
	if (t_under_splitfs() && mode && strcmp(mode, "posix") == 0 &&
	    !t_on_dax(t_path(dir, "cold.dat"))) {
		long cold = t_stat_event(stats, "cold_writes");
		T_CHECK(cold > BLOCKS / 2, "only %ld overwrites took the non-temporal copy", cold);
	}
	return t_result();
}
