/* SPDX-License-Identifier: Apache-2.0 */
/* Description: what the benchmark programs share (bench.h). */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int bench_fail(const char *what)
{
	perror(what);
	return 1;
}

int bench_want(const char *list, const char *name)
{
	if (!list)
		return 1;
	char buf[512], key[64];
	snprintf(buf, sizeof(buf), ",%s,", list);
	snprintf(key, sizeof(key), ",%s,", name);
	return strstr(buf, key) != NULL;
}

uint64_t bench_rnd(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717u;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

long bench_minflt(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return r.ru_minflt;
}

/* Through a volatile pointer: the compiler can neither drop nor inline it. */
static void *(*volatile bench_copy)(void *, const void *, size_t) = memcpy;

double bench_floor(char *mem, char *buf, size_t op, const long *idx, long nops, bool writes)
{
	double t = bench_now();
	for (long i = 0; i < nops; i++) {
		char *at = mem + (size_t)(idx ? idx[i] : i) * op;
		if (writes)
			bench_copy(at, buf, op);
		else
			bench_copy(buf, at, op);
		__asm__ volatile("" ::: "memory");
	}
	return (bench_now() - t) / (double)nops;
}

void bench_result(const char *metric, double value, const char *unit, const struct bench_why *w)
{
	printf("{\"metric\":\"%s\",\"value\":%.1f,\"unit\":\"%s\",\"better\":\"lower\"", metric,
	       value, unit);
	if (w && w->floor_ns >= 0)
		printf(",\"floor_ns\":%.1f", w->floor_ns);
	if (w && w->floor_of)
		printf(",\"floor_of\":\"%s\"", w->floor_of);
	if (w && w->faults >= 0)
		printf(",\"faults\":%.4f", w->faults);
	if (w && w->fsyncs >= 0)
		printf(",\"fsyncs\":%.3f", w->fsyncs);
	if (w && w->call)
		printf(",\"call\":\"%s\"", w->call);
	printf("}\n");
	fflush(stdout);
}

int bench_zero_file(const char *path, uint64_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	static const char zeros[1 << 20];
	for (uint64_t off = 0; off < len; off += sizeof(zeros)) {
		size_t n = len - off < sizeof(zeros) ? (size_t)(len - off) : sizeof(zeros);
		if (pwrite(fd, zeros, n, (off_t)off) != (ssize_t)n) {
			int e = errno;
			close(fd);
			errno = e ? e : ENOSPC;
			return -1;
		}
	}
	if (fsync(fd) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}
