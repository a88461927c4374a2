/* The small-file cycle of issue 15: for each of N fresh files, create it,
 * write 16 KiB, close, open it again, read the 16 KiB, close. Prints the
 * median µs of a whole cycle; checks every byte read.
 *   cc -O2 -o cycle cycle.c; ./cycle DIR N */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int n = atoi(argv[2]);
	double *us = calloc((size_t)n, sizeof(*us));
	char buf[16384], back[16384], path[4096];
	for (int i = 0; i < n; i++) {
		memset(buf, 'a' + i % 26, sizeof(buf));
		snprintf(path, sizeof(path), "%s/f%06d", argv[1], i);
		double t0 = now_us();
		int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || close(fd) != 0)
			return perror(path), 1;
		fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, back, sizeof(back)) != (ssize_t)sizeof(back) ||
		    close(fd) != 0)
			return perror(path), 1;
		us[i] = now_us() - t0;
		if (memcmp(buf, back, sizeof(buf)) != 0)
			return fprintf(stderr, "%s: bytes differ\n", path), 1;
	}
	qsort(us, (size_t)n, sizeof(*us), cmp);
	printf("%.2f\n", us[n / 2]);
	return 0;
}
