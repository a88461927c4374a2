/* SPDX-License-Identifier: Apache-2.0 */
/* The open, 4 KiB pread, close cycle of this study (FxMark's DOCL by hand,
 * one process, no threads): N cycles on FILE (a file of at least 1 MiB),
 * each reading the next of its first 256 blocks; prints ns a cycle.
 *   cc -O2 -o cycle cycle.c; ./cycle FILE N */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long n = atol(argv[2]);
	char b[4096];
	struct timespec a, c;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		int fd = open(argv[1], O_RDONLY);
		if (fd < 0 || pread(fd, b, sizeof(b), (i % 256) * 4096) != 4096)
			return 1;
		close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &c);
	printf("%.0f ns/op\n", ((c.tv_sec - a.tv_sec) * 1e9 + (c.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
