/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the write-ahead log of a database or of Redis's
 * appendfsync always: records appended with write() to an O_APPEND file,
 * each made durable with fdatasync before the next, for record sizes of
 * 128 B, 1 KiB, 4 KiB and 16 KiB. µs per record (append + fdatasync), and
 * for 4 KiB the same with an fdatasync every 8 records (a group commit).
 * No floor: the device's flush bounds every row.
 *   walsync DIR [RECORDS]    default 2000 (the group row: 8x as many) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/bench.h"

/* n records of `size` bytes, an fdatasync after every `group`: µs per
 * record, or a negative number on an error. */
static double wal(const char *path, long n, size_t size, long group)
{
	char *rec = malloc(size);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (!rec || fd < 0)
		return -1;
	memset(rec, 'w', size);
	double t = bench_now();
	for (long i = 0; i < n; i++) {
		rec[0] = (char)i;
		if (write(fd, rec, size) != (ssize_t)size)
			return -1;
		if (i % group == group - 1 && fdatasync(fd) != 0)
			return -1;
	}
	t = bench_now() - t;
	close(fd);
	unlink(path);
	free(rec);
	return t / (double)n / 1e3;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: walsync DIR [RECORDS]\n");
		return 2;
	}
	long n = argc > 2 ? atol(argv[2]) : 2000;
	char path[4096];
	snprintf(path, sizeof(path), "%s/walsync.log", argv[1]);
	static const struct {
		const char *name;
		size_t size;
		long group;
	} rows[] = {{"record_128", 128, 1},
		    {"record_1k", 1024, 1},
		    {"record_4k", 4096, 1},
		    {"record_16k", 16384, 1},
		    {"group8_4k", 4096, 8}};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		long count = n * rows[i].group;
		double us = wal(path, count, rows[i].size, rows[i].group);
		if (us < 0)
			return bench_fail(rows[i].name);
		bench_result(rows[i].name, us, "us/op", NULL);
	}
	return 0;
}
