/* SPDX-License-Identifier: Apache-2.0 */
/* Description: Table 6 of the SplitFS paper, per-call latency: for a fresh
 * file each iteration, open(O_CREAT), four times {append 4 KiB, fsync},
 * close, open, read 16 KiB, close, open+close, unlink. Prints the median of
 * each call over the iterations (ns), one JSON line per call.
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
		printf("{\"metric\":\"%s\",\"value\":%.0f,\"unit\":\"ns\",\"better\":\"lower\"}\n",
		       names[c], t[c][m / 2]);
	}
	return 0;
}
