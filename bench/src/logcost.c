/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the cost of persisting one 64-byte log entry on this file
 * system, by each way a page-cache file system offers, and the cost of a
 * small durable write end to end.
 *
 * On a file pre-filled with zeros and fsynced (as the library's operation
 * log is), N entries at increasing offsets, each made durable before the
 * next:
 *   entry_crc_ns         CRC32C of a 64-byte entry (SSE4.2), no I/O
 *   entry_dsync_ns       pwritev2(RWF_DSYNC) of the entry: what the log does
 *   entry_fdatasync_ns   pwrite, then fdatasync
 *   entry_msync_ns       store through a shared mapping, then msync(MS_SYNC)
 * Then, on another file of 1 MiB:
 *   durable_8b_write_ns  an 8-byte pwrite at a random offset followed by
 *                        fdatasync: the kernel's way to make a small write
 *                        durable. Under SplitFS sync or strict mode the
 *                        pwrite is logged (one 64-byte entry, 64 bytes of
 *                        payload) and durable on return; the fdatasync that
 *                        follows has nothing left to do.
 *
 *   logcost DIR [N]      default 2000 entries (each costs a device flush) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <nmmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lib/bench.h"

#define ENTRY 64

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void emit(const char *metric, double ns)
{
	printf("{\"metric\":\"%s\",\"value\":%.1f,\"unit\":\"ns/op\",\"better\":\"lower\"}\n",
	       metric, ns);
}

__attribute__((target("sse4.2"))) static uint32_t crc64b(const void *p)
{
	const uint64_t *w = p;
	uint64_t c = ~0u;
	for (int i = 0; i < ENTRY / 8; i++)
		c = _mm_crc32_u64(c, w[i]);
	return ~(uint32_t)c;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: logcost DIR [N]\n");
		return 2;
	}
	long n = argc > 2 ? atol(argv[2]) : 2000;
	char path[4096];
	size_t len = ((size_t)n * ENTRY + 65535) & ~(size_t)65535;
	unsigned char e[ENTRY];
	memset(e, 0xa5, sizeof(e));

	volatile uint32_t sink = 0;
	long crcs = 1000000;
	double t0 = now();
	for (long i = 0; i < crcs; i++) {
		e[0] = (unsigned char)i;
		sink += crc64b(e);
	}
	emit("entry_crc_ns", (now() - t0) / (double)crcs * 1e9);

	snprintf(path, sizeof(path), "%s/logcost.log", argv[1]);
	int fd = bench_zero_file(path, len);
	if (fd < 0)
		return perror(path), 1;
	t0 = now();
	for (long i = 0; i < n; i++) {
		struct iovec v = {e, ENTRY};
		if (pwritev2(fd, &v, 1, (off_t)i * ENTRY, RWF_DSYNC) != ENTRY)
			return perror("pwritev2"), 1;
	}
	emit("entry_dsync_ns", (now() - t0) / (double)n * 1e9);
	t0 = now();
	for (long i = 0; i < n; i++)
		if (pwrite(fd, e, ENTRY, (off_t)i * ENTRY) != ENTRY || fdatasync(fd) != 0)
			return perror("pwrite+fdatasync"), 1;
	emit("entry_fdatasync_ns", (now() - t0) / (double)n * 1e9);
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return perror("mmap"), 1;
	t0 = now();
	for (long i = 0; i < n; i++) {
		unsigned char *at = m + i * ENTRY;
		memcpy(at, e, ENTRY);
		uintptr_t page = (uintptr_t)at & ~(uintptr_t)4095;
		if (msync((void *)page, 4096, MS_SYNC) != 0)
			return perror("msync"), 1;
	}
	emit("entry_msync_ns", (now() - t0) / (double)n * 1e9);
	munmap(m, len);
	close(fd);
	unlink(path);

	snprintf(path, sizeof(path), "%s/logcost.dat", argv[1]);
	fd = bench_zero_file(path, 1 << 20);
	if (fd < 0)
		return perror(path), 1;
	uint64_t x = 88172645463325252ull;
	t0 = now();
	for (long i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		off_t off = (off_t)(x % ((1 << 20) / 8)) * 8;
		if (pwrite(fd, &x, 8, off) != 8 || fdatasync(fd) != 0)
			return perror("durable write"), 1;
	}
	emit("durable_8b_write_ns", (now() - t0) / (double)n * 1e9);
	close(fd);
	unlink(path);
	return sink == 1 ? 3 : 0; /* keeps the CRC loop */
}
