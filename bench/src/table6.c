/* SPDX-License-Identifier: Apache-2.0 */
/* Description: Table 6 of the SplitFS paper, per-call latency: for a fresh
 * file each iteration, open(O_CREAT), four times {append 4 KiB, fsync},
 * close, open, read 16 KiB, close, open+close, unlink. Prints the median of
 * each call over the iterations (ns), one JSON line per call. append_4k and
 * read_16k also carry their memcpy floor: the median of as many 4 KiB
 * (16 KiB) copies between hot buffers, timed the same way, before the
 * files (the other calls copy no data: no floor). Each line but the total
 * names its call's row in the library's stats, for bench/report.py.
 *   table6 DIR [iterations] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/bench.h"

enum { CREATE, APPEND, FSYNC, CLOSE_W, OPEN, READ, CLOSE_R, OPEN_CLOSE, UNLINK, TOTAL, NCALLS };
static const char *const names[NCALLS] = {"open_create", "append_4k", "fsync", "close_after_write",
					  "open",	 "read_16k",  "close", "open_close",
					  "unlink",	 "total"};

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int n = argc > 2 ? atoi(argv[2]) : 2000;
	char path[4096];
	static char buf[16384];
	memset(buf, 'x', sizeof(buf));
	double *t[NCALLS];
	for (int c = 0; c < NCALLS; c++)
		t[c] = calloc((size_t)n * 4, sizeof(double));
	/* The floors, timed as the calls are (a clock read before and after). */
	static char other[16384];
	static void *(*volatile copy)(void *, const void *, size_t) = memcpy;
	double memfloor[2];
	for (int f = 0; f < 2; f++) {
		size_t len = f ? 16384 : 4096;
		for (int i = 0; i < n; i++) {
			double a = bench_now();
			copy(other, buf, len);
			__asm__ volatile("" ::: "memory");
			t[TOTAL][i] = bench_now() - a;
		}
		qsort(t[TOTAL], (size_t)n, sizeof(double), bench_cmp_double);
		memfloor[f] = t[TOTAL][n / 2];
	}
	int na = 0;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/t6-%d", argv[1], i);
		double t0 = bench_now(), a = t0, b;
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
		b = bench_now(), t[CREATE][i] = b - a, a = b;
		for (int k = 0; k < 4; k++) {
			if (write(fd, buf, 4096) != 4096)
				return 1;
			b = bench_now(), t[APPEND][na] = b - a, a = b;
			fsync(fd);
			b = bench_now(), t[FSYNC][na++] = b - a, a = b;
		}
		close(fd);
		b = bench_now(), t[CLOSE_W][i] = b - a, a = b;
		fd = open(path, O_RDONLY);
		b = bench_now(), t[OPEN][i] = b - a, a = b;
		if (read(fd, buf, 16384) != 16384)
			return 1;
		b = bench_now(), t[READ][i] = b - a, a = b;
		close(fd);
		b = bench_now(), t[CLOSE_R][i] = b - a, a = b;
		close(open(path, O_RDONLY));
		b = bench_now(), t[OPEN_CLOSE][i] = b - a, a = b;
		unlink(path);
		b = bench_now(), t[UNLINK][i] = b - a;
		t[TOTAL][i] = b - t0;
	}
	for (int c = 0; c < NCALLS; c++) {
		int m = (c == APPEND || c == FSYNC) ? na : n;
		qsort(t[c], (size_t)m, sizeof(double), bench_cmp_double);
		/* Each call's row in the library's stats; open_close makes two
		 * calls and the total many: none. */
		static const char *const calls[NCALLS] = {"open",   "write", "fsync", "close",
							  "open",   "read",  "close", NULL,
							  "unlink", NULL};
		struct bench_why w = {-1, NULL, -1, c == FSYNC, calls[c]};
		if (c == APPEND || c == READ) {
			w.floor_ns = memfloor[c == READ];
			w.floor_of = "memcpy of as many bytes between hot buffers";
		}
		bench_result(names[c], t[c][m / 2], "ns", c == TOTAL ? NULL : &w);
	}
	return 0;
}
