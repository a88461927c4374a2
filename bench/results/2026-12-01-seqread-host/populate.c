/* SPDX-License-Identifier: Apache-2.0 */
/* Description: what a sequential reader of a shared file mapping pays in
 * all, mapping included, for its pages: taking the faults as it goes
 * (mode 0), populating each 2 MiB with madvise(MADV_POPULATE_READ) as it
 * enters it (mode 1), or mmap(MAP_POPULATE) of the whole file (mode 2,
 * what MadFS does as it maps a file's chunks). FILE: 128 MiB, in the page
 * cache. Prints ns a 4 KiB read, the mmap and populate included.
 *   cc -O2 -o populate populate.c && ./populate FILE MODE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#define SIZE ((size_t)128 << 20)
#define CHUNK ((size_t)2 << 20)
#define OP 4096

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: populate FILE 0|1|2\n");
		return 2;
	}
	int mode = atoi(argv[2]);
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	static char buf[OP];
	double t0 = now_ns();
	char *m = mmap(NULL, SIZE, PROT_READ, MAP_SHARED | (mode == 2 ? MAP_POPULATE : 0), fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (size_t off = 0; off < SIZE; off += OP) {
		if (mode == 1 && off % CHUNK == 0)
			madvise(m + off, CHUNK, MADV_POPULATE_READ);
		memcpy(buf, m + off, OP);
		__asm__ volatile("" : : "r"(buf) : "memory"); /* the copy is kept */
	}
	printf("mode %d: %.0f ns a 4 KiB read, the mapping included\n", mode,
	       (now_ns() - t0) / (double)(SIZE / OP));
	return 0;
}
