/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the crash harness's workload runner and checker
 * (tests/crash/README.md).
 *
 *   crashtool run WORKLOAD DIR ACKFILE SEED
 *       runs the workload in DIR until killed, acknowledging to ACKFILE
 *   crashtool check WORKLOAD DIR ACKFILE MODE KIND
 *       checks what DIR holds against ACKFILE; MODE posix|sync|strict,
 *       KIND kill (the process was killed) | power (the machine was)
 *
 * WORKLOAD: append | nosync (append, never fsync) | threads (4 appenders,
 * one process) | overwrite | overthreads (4 overwriters of one file, one
 * process) | mixed | truncate (mixed, mostly truncate(2)). check exits 0 (the mode's
 * guarantees held), 1 (violations, each printed) or 2 (usage, I/O). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../c/helpers.h"
#include "crash.h"

int violations;
static int ack_fd = -1;

void violation(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("VIOLATION: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	violations++;
}

void ack_open(const char *path)
{
	ack_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (ack_fd < 0) {
		perror(path);
		exit(2);
	}
}

void ack(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		exit(2);
	line[n++] = '\n';
	/* One write of the whole line: a crash leaves it whole or torn at the
	 * end of the file, never interleaved. */
	if (write(ack_fd, line, (size_t)n) != n)
		exit(2);
}

char **ack_read(const char *path, size_t *n)
{
	unsigned char *buf;
	long len = read_file(path, &buf);
	*n = 0;
	if (len < 0)
		return NULL;
	size_t cap = 64;
	char **lines = malloc(cap * sizeof(*lines));
	char *p = (char *)buf, *end = p + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break; /* a torn last line */
		*nl = '\0';
		if (*n + 1 >= cap)
			lines = realloc(lines, (cap *= 2) * sizeof(*lines));
		lines[(*n)++] = p;
		p = nl + 1;
	}
	lines[*n] = NULL;
	return lines;
}

long read_file(const char *path, unsigned char **buf)
{
	*buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long size, got = t_read_fd(fd, buf, &size);
	close(fd);
	return got;
}

uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

uint32_t crc32_sw(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;
	crc = ~crc;
	for (size_t i = 0; i < n; i++) {
		crc ^= b[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

void fill_stream(unsigned char *buf, size_t n, uint32_t stream, uint64_t at)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t pos = at + i;
		uint32_t w = mix32((uint32_t)(pos >> 2) ^ mix32(stream));
		buf[i] = (unsigned char)(w >> (8 * (pos & 3)));
	}
}

uint32_t rnd(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return (uint32_t)(x >> 16);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: crashtool run WORKLOAD DIR ACKFILE SEED\n"
		"       crashtool check WORKLOAD DIR ACKFILE posix|sync|strict kill|power\n");
	return 2;
}

/* POSIX mode after a power cut at cut_ns (CLOCK_REALTIME): no file of dir
 * may say it was modified later. The kernel's fsync makes a file's time
 * durable with its data, and so does a record of the log that serves a
 * sync (src/fs/logsync.h): replay gives the time back. */
static void check_times(const char *dir, long long cut_ns)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		long long t = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		if (t > cut_ns)
			violation("%s: modified %.3f s after the power cut (the recovery's time?)",
				  e->d_name, (double)(t - cut_ns) / 1e9);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return usage();
	const char *wl = argv[2], *dir = argv[3], *acks = argv[4];
	if (strcmp(argv[1], "run") == 0 && argc == 6) {
		uint64_t seed = strtoull(argv[5], NULL, 0) * 2654435761u + 1;
		ack_open(acks);
		if (strcmp(wl, "append") == 0 || strcmp(wl, "nosync") == 0)
			return run_append(dir, seed, strcmp(wl, "nosync") == 0);
		if (strcmp(wl, "threads") == 0)
			return run_append_threads(dir, seed);
		if (strcmp(wl, "overwrite") == 0)
			return run_overwrite(dir, seed);
		if (strcmp(wl, "overthreads") == 0)
			return run_overwrite_threads(dir, seed);
		if (strcmp(wl, "mixed") == 0 || strcmp(wl, "truncate") == 0)
			return run_mixed(dir, seed, strcmp(wl, "truncate") == 0);
		return usage();
	}
	if (strcmp(argv[1], "check") != 0 || argc != 7)
		return usage();
	enum crash_mode m;
	if (strcmp(argv[5], "posix") == 0)
		m = MODE_POSIX;
	else if (strcmp(argv[5], "sync") == 0)
		m = MODE_SYNC;
	else if (strcmp(argv[5], "strict") == 0)
		m = MODE_STRICT;
	else
		return usage();
	enum crash_kind k = strcmp(argv[6], "power") == 0 ? KIND_POWER : KIND_KILL;
	size_t n;
	char **lines = ack_read(acks, &n);
	if (!lines && errno != ENOENT) {
		perror(acks);
		return 2;
	}
	if (!lines) { /* killed before it started: nothing acknowledged */
		lines = calloc(1, sizeof(*lines));
		n = 0;
	}
	int rc;
	if (strcmp(wl, "append") == 0 || strcmp(wl, "nosync") == 0)
		rc = check_append(dir, lines, n, m, k);
	else if (strcmp(wl, "threads") == 0)
		rc = check_append_threads(dir, lines, n, m, k);
	else if (strcmp(wl, "overwrite") == 0 || strcmp(wl, "overthreads") == 0)
		rc = check_overwrite(dir, lines, n, m, k);
	else if (strcmp(wl, "mixed") == 0 || strcmp(wl, "truncate") == 0)
		rc = check_mixed(dir, lines, n, m, k);
	else
		return usage();
	if (rc)
		return rc;
	const char *cut = getenv("CRASH_CUT_NS");
	if (k == KIND_POWER && cut)
		check_times(dir, strtoll(cut, NULL, 10));
	return violations ? 1 : 0;
}
