/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a file the process wrote and closed, then opened for reading
 * by two threads at once (FxMark's DRBM), is leased again and served from
 * user space. The second reader's open keeps an open file of its own until
 * the lease merges it into the library's (src/fs/openfile.h); a merge that
 * ran while the other thread was still installing its descriptor missed
 * it, the kernel refused the lease, and no later try merged again: the
 * file stayed the kernel's for as long as it was read (FxMark DRBM_t2:
 * 0.75x the kernel's reads). ROUNDS children (this program again,
 * statistics on) each make such a file and read it with two threads for
 * READ_MS, checking every byte; under the library each child must have
 * leased its file twice (its writer's lease and its readers'). On the
 * library before the fix, 2 and 3 of 8 children in two runs did not.
 *   thread_readers DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define ROUNDS 8       /* SFS_TEST_SCALE scales them */
#define HALF (1 << 20) /* each reader's part of the file */
#define BLOCK 4096
#define READ_MS 60

static const char *file;
static unsigned char *expect; /* the file's bytes */
static atomic_int ready, go;

static long ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void make(const char *path, unsigned seed)
{
	static unsigned char b[BLOCK];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open %s", path);
	for (long off = 0; off < 2 * HALF; off += BLOCK) {
		t_fill(b, BLOCK, seed, off);
		T_REQUIRE(pwrite(fd, b, BLOCK, off) == BLOCK, "pwrite at %ld", off);
	}
	T_REQUIRE(fsync(fd) == 0 && close(fd) == 0, "fsync and close %s", path);
}

/* Reader w: opens the file, then, once the other has too, reads its half
 * again and again for READ_MS, checking each block. */
static void *reader(void *arg)
{
	long w = (long)arg;
	static unsigned char got[2][BLOCK];
	int fd = open(file, O_RDONLY);
	T_REQUIRE(fd >= 0, "reader %ld: open", w);
	/* Both start at once, as FxMark's workers do: spinning, not woken. */
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&go))
		;
	long until = ms_now() + READ_MS;
	do {
		for (long off = w * HALF; off < (w + 1) * HALF; off += BLOCK) {
			T_REQUIRE(pread(fd, got[w], BLOCK, off) == BLOCK, "reader %ld: pread", w);
			T_REQUIRE(memcmp(got[w], expect + off, BLOCK) == 0,
				  "reader %ld: bytes at %ld", w, off);
		}
	} while (ms_now() < until);
	T_REQUIRE(close(fd) == 0, "reader %ld: close", w);
	return NULL;
}

/* One file, written, closed and read by two threads, in a process of its
 * own: the race is with the process's first lease of the readers (its
 * lease service thread starts with the process's first lease). */
static void child(const char *dir, int round)
{
	expect = malloc(2 * HALF);
	T_REQUIRE(expect, "malloc");
	char name[32];
	snprintf(name, sizeof(name), "shared.%d", round);
	char *path = strdup(t_path(dir, name));
	make(path, (unsigned)round + 1);
	t_fill(expect, 2 * HALF, (unsigned)round + 1, 0);
	file = path;
	pthread_t t[2];
	for (long w = 0; w < 2; w++)
		T_REQUIRE(pthread_create(&t[w], NULL, reader, (void *)w) == 0, "thread");
	while (atomic_load(&ready) < 2)
		usleep(1000);
	atomic_store(&go, 1);
	for (int w = 0; w < 2; w++)
		pthread_join(t[w], NULL);
	T_REQUIRE(unlink(path) == 0, "unlink %s", path);
	free(path);
	free(expect);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: thread_readers DIR");
	const char *round = getenv("THREAD_READERS_ROUND");
	if (round) {
		child(argv[1], atoi(round));
		return t_result();
	}
	int unleased = 0;
	int rounds = t_scaled(ROUNDS, 2);
	for (int r = 0; r < rounds; r++) {
		char *stats = strdup(t_path(argv[1], "stats"));
		char num[16];
		snprintf(num, sizeof(num), "%d", r);
		int st = t_run_self_stats(argv[1], "THREAD_READERS_ROUND", num, stats);
		T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "round %d: the readers failed (%#x)",
			r, st);
		if (t_under_splitfs() && t_stat_event(stats, "leases") < 2)
			unleased++;
		free(stats);
	}
	T_CHECK(unleased == 0,
		"%d of %d files written and then read by two threads were not "
		"leased again for their readers",
		unleased, rounds);
	return t_result();
}
