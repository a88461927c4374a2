/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the per-call cost of the data path on a hot file: 3 M 4 KiB
 * preads (or pwrites) cycling over the first 1 MiB of FILE, after 100 k
 * warm-up calls. Prints ns per call. For A/B runs of two library builds on
 * one CPU (taskset), where a few ns matter (59f917b: bench/results/2026-11-25-fxmark-device).
 *   hotio FILE [w] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OP 4096
#define SPAN 256 /* blocks: 1 MiB */

static int op(int fd, char *buf, long i, int writes)
{
	off_t off = (off_t)(i % SPAN) * OP;
	return (writes ? pwrite(fd, buf, OP, off) : pread(fd, buf, OP, off)) == OP ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: hotio FILE [w]\n");
		return 2;
	}
	int writes = argc > 2 && strcmp(argv[2], "w") == 0;
	static char buf[OP * SPAN];
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		perror(argv[1]);
		return 1;
	}
	for (long i = 0; i < 100000; i++)
		if (op(fd, buf, i, writes))
			return perror("warm-up"), 1;
	struct timespec t0, t1;
	long n = 3000000;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++)
		if (op(fd, buf, i, writes))
			return perror("io"), 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.1f\n",
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
		       (double)n);
	close(fd);
	return 0;
}
