/* SPDX-License-Identifier: Apache-2.0 */
/* Description: what lseek(SEEK_END) and an 8 KiB pread cost on a file
 * another process holds open (so the library cannot lease it): the file
 * is written 20 times in 8 KiB (managed then), then N lseek(fd, 0,
 * SEEK_END), then N preads of 8 KiB over its first MiB. Prints ns each.
 *   cc -O2 -o lseek lseek.c
 *   exec 7<>FILE; ./lseek FILE N    (the shell's descriptor 7 holds it) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int n = atoi(argv[2]);
	static char buf[8192];
	int fd = open(argv[1], O_RDWR);
	if (fd < 0)
		return 1;
	for (int i = 0; i < 20; i++)
		if (pwrite(fd, buf, sizeof(buf), (off_t)i * 8192) != (ssize_t)sizeof(buf))
			return 1;
	double t0 = now();
	long s = 0;
	for (int i = 0; i < n; i++)
		s += lseek(fd, 0, SEEK_END);
	double t1 = now();
	for (int i = 0; i < n; i++)
		s += pread(fd, buf, sizeof(buf), (off_t)(i % 128) * 8192);
	double t2 = now();
	printf("lseek_end %.0f ns, pread8k %.0f ns (%ld)\n", (t1 - t0) / n, (t2 - t1) / n, s & 1);
	return 0;
}
