/* SPDX-License-Identifier: Apache-2.0 */
/* Description: Table 1 of the SplitFS paper, software overhead of a 4 KiB
 * operation: its latency minus the cost of the 4 KiB memcpy it cannot avoid.
 * In one process:
 *   - the timer itself (two back-to-back clock_gettime), subtracted from
 *     every median below so the numbers are the operation alone;
 *   - memcpy of 4 KiB from a hot buffer (same 4 KiB source and destination)
 *     and from a cold one (4 KiB blocks in random order from a COLD_MiB
 *     buffer, much larger than the last-level cache, into a hot one);
 *   - append: write() of 4 KiB to a fresh file, FILE_MiB in all, no fsync;
 *   - then fsync, close, reopen (an existing, cached file) and time 4 KiB
 *     pread at random 4 KiB-aligned offsets, then 4 KiB pwrite likewise.
 * Each latency is timed alone; the median is reported (the mean of the
 * appends too: it carries the occasional relink / writeback the median
 * hides). overhead = median - memcpy_cold median; "overhead_ns" is the
 * append's, as in the paper's Table 1. One JSON line per number, ns; the
 * three latencies also carry that floor, the minor page faults per op of
 * their loop and their call, for bench/report.py's overhead table.
 *   overhead DIR [FILE_MiB] [SAMPLES] [COLD_MiB]    default 256 65536 1024 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/bench.h"

#define OP 4096

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double median(uint64_t *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

static double mean(const uint64_t *v, long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += (double)v[i];
	return s / (double)n;
}

static void emit(const char *metric, double ns)
{
	bench_result(metric, ns, "ns", NULL);
}

/* A latency with its floor (the cold memcpy), the faults its loop of n ops
 * took and its call. */
static void emit_why(const char *metric, double ns, double floor, long faults, long n,
		     const char *call)
{
	struct bench_why w = {floor, "memcpy_cold_ns: 4 KiB from random blocks of a cold buffer",
			      (double)faults / (double)n, 0, call};
	bench_result(metric, ns, "ns", &w);
}

/* xorshift64*: a fixed sequence, the same in every configuration. */
static uint64_t rng = 0x9e3779b97f4a7c15u;

/* Through a volatile pointer: the compiler can neither drop nor inline it. */
static void *(*volatile copy)(void *, const void *, size_t) = memcpy;

static char hot[OP] __attribute__((aligned(4096))), dst[OP] __attribute__((aligned(4096)));

/* samples 4 KiB preads into dst (with `writes`, pwrites of hot) at random
 * blocks of fd's first nblocks, each timed alone into t; 0, or 1 after
 * saying why. Always inlined with a constant `writes`: the timed call is
 * then all that differs, as in two loops. */
static inline __attribute__((always_inline)) int random_io(int fd, long nblocks, long samples,
							   uint64_t *t, bool writes)
{
	for (long i = 0; i < samples; i++) {
		off_t off = (off_t)(bench_rnd(&rng) % (uint64_t)nblocks) * OP;
		if (writes)
			hot[0] = (char)i;
		uint64_t a = bench_ns();
		if ((writes ? pwrite(fd, hot, OP, off) : pread(fd, dst, OP, off)) != OP)
			return bench_fail(writes ? "pwrite" : "pread");
		t[i] = bench_ns() - a;
	}
	return 0;
}

/* One row of random 4 KiB reads (or overwrites) of the cached file: the
 * median less the timer, reported against the floor with its faults per op,
 * and as an overhead over the floor. 0, or 1 after saying why. */
static inline __attribute__((always_inline)) int random_row(int fd, long nblocks, long samples,
							    uint64_t *t, bool writes, double timer,
							    double floor, const char *metric,
							    const char *overhead)
{
	long f = bench_minflt();
	if (random_io(fd, nblocks, samples, t, writes))
		return 1;
	f = bench_minflt() - f;
	double med = median(t, samples) - timer;
	emit_why(metric, med, floor, f, samples, writes ? "pwrite" : "pread");
	emit(overhead, med - floor);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: overhead DIR [FILE_MiB] [SAMPLES] [COLD_MiB]\n");
		return 2;
	}
	long file_mib = argc > 2 ? atol(argv[2]) : 256;
	long samples = argc > 3 ? atol(argv[3]) : 65536;
	long cold_mib = argc > 4 ? atol(argv[4]) : 1024;
	long nblocks = file_mib * (1 << 20) / OP;
	if (nblocks < 1 || samples < 1 || cold_mib < 1)
		return 2;
	long nmax = nblocks > samples ? nblocks : samples;
	uint64_t *t = malloc(sizeof(*t) * (size_t)nmax);
	memset(hot, 'h', sizeof(hot));
	memset(dst, 'd', sizeof(dst));
	if (!t)
		return 1;

	/* The timer: median of back-to-back reads. */
	for (long i = 0; i < samples; i++) {
		uint64_t a = bench_ns();
		t[i] = bench_ns() - a;
	}
	double timer = median(t, samples);
	emit("timer_ns", timer);

	/* memcpy, hot: 4 KiB to 4 KiB, both in L1/L2. */
	for (long i = 0; i < samples; i++) {
		uint64_t a = bench_ns();
		copy(dst, hot, OP);
		__asm__ volatile("" ::: "memory");
		t[i] = bench_ns() - a;
	}
	emit("memcpy_hot_ns", median(t, samples) - timer);

	/* memcpy, cold: random 4 KiB blocks of a buffer much larger than the LLC
	 * (each block is used once per pass, so it comes from DRAM). */
	size_t cold_len = (size_t)cold_mib << 20;
	long cold_blocks = (long)(cold_len / OP);
	char *cold = aligned_alloc(OP, cold_len);
	if (!cold)
		return 1;
	memset(cold, 'c', cold_len);
	double cold_med;
	{
		long n = samples < cold_blocks ? samples : cold_blocks;
		long *order = malloc(sizeof(long) * (size_t)cold_blocks);
		for (long i = 0; i < cold_blocks; i++)
			order[i] = i;
		for (long i = cold_blocks - 1; i > 0; i--) {
			long j = (long)(bench_rnd(&rng) % (uint64_t)(i + 1)), x = order[i];
			order[i] = order[j];
			order[j] = x;
		}
		for (long i = 0; i < n; i++) {
			const char *src = cold + (size_t)order[i] * OP;
			uint64_t a = bench_ns();
			copy(dst, src, OP);
			__asm__ volatile("" ::: "memory");
			t[i] = bench_ns() - a;
		}
		cold_med = median(t, n) - timer;
		free(order);
	}
	free(cold);
	emit("memcpy_cold_ns", cold_med);

	/* Appends to a fresh file. */
	char path[4096];
	snprintf(path, sizeof(path), "%s/overhead.dat", argv[1]);
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return bench_fail(path);
	long f = bench_minflt();
	for (long i = 0; i < nblocks; i++) {
		hot[0] = (char)i;
		uint64_t a = bench_ns();
		if (write(fd, hot, OP) != OP)
			return bench_fail("write");
		t[i] = bench_ns() - a;
	}
	f = bench_minflt() - f;
	double amean = mean(t, nblocks) - timer, amed = median(t, nblocks) - timer;
	emit_why("append_4k_ns", amed, cold_med, f, nblocks, "write");
	emit("append_4k_mean_ns", amean);
	emit("overhead_ns", amed - cold_med);
	if (fsync(fd) != 0 || close(fd) != 0)
		return bench_fail("fsync/close");

	/* The same file, existing and in the page cache: random 4 KiB reads. */
	fd = open(path, O_RDWR);
	if (fd < 0)
		return bench_fail(path);
	if (random_row(fd, nblocks, samples, t, false, timer, cold_med, "read_4k_ns",
		       "read_overhead_ns"))
		return 1;
	/* Random 4 KiB overwrites, no fsync. */
	if (random_row(fd, nblocks, samples, t, true, timer, cold_med, "overwrite_4k_ns",
		       "overwrite_overhead_ns"))
		return 1;
	close(fd);
	unlink(path);
	free(t);
	return 0;
}
