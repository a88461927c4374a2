/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the write-ahead log of a database or of Redis's
 * appendfsync always: records appended with write() to an O_APPEND file,
 * each made durable with fdatasync before the next, for record sizes of
 * 128 B, 1 KiB, 4 KiB and 16 KiB; for 4 KiB the same with an fdatasync
 * every 8 records (a group commit), and 4 KiB records written in order over
 * a log of RING bytes written and synced before (ring_4k: SQLite's WAL once
 * a checkpoint has started it again at its head, PostgreSQL's recycled WAL
 * segments), each synced; and 4 KiB records appended, each made durable
 * with fsync (fsync_4k: how Java's FileChannel.force(true), Node's fsync
 * and Python's os.fsync sync a log). µs per record (write + fdatasync or
 * fsync). No floor: the device's flush bounds every row.
 *   walsync DIR [RECORDS]    default 2000 (the group row: 8x as many) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/bench.h"

#define RING (4 << 20)

/* The log of the ring row: RING bytes, durable. */
static int ring_log(const char *path, const char *rec, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (long off = 0; fd >= 0 && off < RING; off += (long)size)
		if (write(fd, rec, size) != (ssize_t)size)
			return -1;
	return fd >= 0 && fdatasync(fd) == 0 ? fd : -1;
}

/* n records of `size` bytes, an fdatasync (fsync when full) after every
 * `group`: appended, or round a ring. µs per record, or a negative number
 * on an error. */
static double wal(const char *path, long n, size_t size, long group, bool ring, bool full)
{
	char *rec = malloc(size);
	if (!rec)
		return -1;
	memset(rec, 'w', size);
	int fd = ring ? ring_log(path, rec, size) :
			open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0)
		return -1;
	double t = bench_now();
	for (long i = 0; i < n; i++) {
		rec[0] = (char)i;
		ssize_t w = ring ? pwrite(fd, rec, size, (off_t)((i * (long)size) % RING)) :
				   write(fd, rec, size);
		if (w != (ssize_t)size)
			return -1;
		if (i % group == group - 1 && (full ? fsync(fd) : fdatasync(fd)) != 0)
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
		bool ring, full;
	} rows[] = {{"record_128", 128, 1, false, false}, {"record_1k", 1024, 1, false, false},
		    {"record_4k", 4096, 1, false, false}, {"record_16k", 16384, 1, false, false},
		    {"group8_4k", 4096, 8, false, false}, {"ring_4k", 4096, 1, true, false},
		    {"fsync_4k", 4096, 1, false, true}};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		long count = n * rows[i].group;
		double us =
			wal(path, count, rows[i].size, rows[i].group, rows[i].ring, rows[i].full);
		if (us < 0)
			return bench_fail(rows[i].name);
		bench_result(rows[i].name, us, "us/op", NULL);
	}
	return 0;
}
