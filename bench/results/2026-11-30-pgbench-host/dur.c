/* SPDX-License-Identifier: Apache-2.0 */
/* Study program (table.md): µs per durable record, natively, for three
 * ways of making a record durable: an append and fdatasync, an overwrite
 * of written blocks and fdatasync, and the same overwrite with RWF_DSYNC.
 *   dur DIR RECORDS SIZE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: dur DIR RECORDS SIZE\n");
		return 2;
	}
	char log[4096], pre[4096];
	snprintf(log, sizeof(log), "%s/dur-append", argv[1]);
	snprintf(pre, sizeof(pre), "%s/dur-written", argv[1]);
	long n = atol(argv[2]);
	size_t size = (size_t)atol(argv[3]);
	char *buf = malloc(1 << 20);
	if (n <= 0 || size == 0 || size > (1 << 20) || !buf)
		return 2;
	memset(buf, 'd', 1 << 20);

	int fa = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fa < 0)
		return 1;
	double t = now_us();
	for (long i = 0; i < n; i++)
		if (write(fa, buf, size) != (ssize_t)size || fdatasync(fa) != 0)
			return 1;
	double append = (now_us() - t) / (double)n;

	/* Written blocks, their size and extents durable before the loops. */
	int fw = open(pre, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fw < 0)
		return 1;
	for (long off = 0; off < n * (long)size + (1 << 20); off += 1 << 20)
		if (pwrite(fw, buf, 1 << 20, off) != 1 << 20)
			return 1;
	if (fsync(fw) != 0)
		return 1;
	t = now_us();
	for (long i = 0; i < n; i++)
		if (pwrite(fw, buf, size, i * (long)size) != (ssize_t)size || fdatasync(fw) != 0)
			return 1;
	double overwrite = (now_us() - t) / (double)n;
	struct iovec v = {buf, size};
	t = now_us();
	for (long i = 0; i < n; i++)
		if (pwritev2(fw, &v, 1, i * (long)size, RWF_DSYNC) != (ssize_t)size)
			return 1;
	double dsync = (now_us() - t) / (double)n;

	printf("size %zu: append+fdatasync %.1f us; overwrite+fdatasync %.1f us; "
	       "overwrite RWF_DSYNC %.1f us\n",
	       size, append, overwrite, dsync);
	close(fa);
	close(fw);
	unlink(log);
	unlink(pre);
	free(buf);
	return 0;
}
