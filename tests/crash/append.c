/* SPDX-License-Identifier: Apache-2.0 */
/* The appender: variable-size records (a 16-byte header with sequence
 * number, length and CRC, then a payload from the record's own stream)
 * appended to append.dat with write, writev (header and payload apart) or
 * pwrite at the end, one call per record, fsync or fdatasync every 1-8
 * records; in some runs a forked child holds the file open (shared with
 * another process, SplitFS leaves it to the kernel). The whole file is one deterministic byte stream, so whatever the
 * crash left can be compared byte for byte with what it must be.
 *
 * The nosync workload is the same appender without any fsync. The threads
 * workload runs THREADS appenders at once in one process, each on its own
 * file (append.<t>.dat, acknowledged as "T<t>:B 12"...), so that sync and
 * strict modes log their writes in several lanes of one log set, which
 * recovery must merge.
 *
 * Guarantees checked (n = records found intact from the start):
 *   all modes   the file is a prefix of the stream: no zeros, no garbage,
 *               and nothing past the last record begun
 *   posix       n covers every record an fsync returned for, and after a
 *               kill every record whose write returned (the kernel's page
 *               cache keeps them; the library's staging store, put back by
 *               `splitfs recover`)
 *   sync        n covers every record whose write returned
 *   strict      as sync, and no partial record (each write all or nothing) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crash.h"

#define MAGIC 0x50504152u /* "RAPP" */
#define HDR 16u
#define CAP (32u << 20) /* the appender idles past this */
#define THREADS 4

static uint32_t payload_len(uint32_t seq)
{
	uint32_t x = mix32(seq * 2654435761u + 7);
	return 1 + (x % 8 == 0 ? x % 6000 : x % 700);
}

/* Record seq, whole: returns its length. */
static size_t make_record(unsigned char *buf, uint32_t seq)
{
	uint32_t len = payload_len(seq);
	fill_stream(buf + HDR, len, seq, 0);
	uint32_t h[4] = {MAGIC, seq, len, 0};
	h[3] = crc32_sw(crc32_sw(0, h, 12), buf + HDR, len);
	memcpy(buf, h, HDR);
	return HDR + len;
}

/* One appender: its file, its acknowledgements' prefix ("" alone, "T2:"
 * as thread 2), its choices. */
struct appender {
	const char *dir, *file, *tag;
	uint64_t seed;
	bool nosync, may_fork;
};

static int append_loop(struct appender *a)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", a->dir, a->file);
	uint64_t seed = a->seed;
	uint32_t how = rnd(&seed);
	int flags = O_WRONLY | O_CREAT | O_TRUNC | ((how & 1) ? O_APPEND : 0);
	int fd = open(path, flags, 0644);
	if (fd < 0)
		return perror(path), 2;
	/* Not in strict mode: a shared file's writes are durable there, but not
	 * atomic (README, limits of sync and strict modes). */
	const char *mode = getenv("SPLITFS_MODE");
	if (a->may_fork && (how & 4) && !(mode && strcmp(mode, "strict") == 0)) {
		/* A child holds the descriptor (and dies with the parent): the
		 * file is shared, so SplitFS leaves it to the kernel, and sync
		 * mode syncs each write there. */
		pid_t child = fork();
		if (child == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			for (;;)
				pause();
		}
		if (child < 0)
			return perror("fork"), 2;
	}
	unsigned every = a->nosync ? UINT32_MAX : 1 + rnd(&seed) % 8;
	unsigned char *buf = malloc(HDR + 6000);
	uint64_t end = 0;
	/* CRASH_APPEND_CAP (MiB): a bigger file (the 128 MiB log test). */
	uint64_t cap = getenv("CRASH_APPEND_CAP") ?
			       strtoull(getenv("CRASH_APPEND_CAP"), NULL, 0) << 20 :
			       CAP;
	for (uint32_t seq = 0;; seq++) {
		if (end > cap) {
			pause();
			continue;
		}
		size_t len = make_record(buf, seq);
		ack("%sB %u", a->tag, seq);
		ssize_t w;
		switch (rnd(&seed) % 3) {
		case 0:
			w = write(fd, buf, len);
			break;
		case 1: {
			struct iovec v[2] = {{buf, HDR}, {buf + HDR, len - HDR}};
			w = writev(fd, v, 2);
			break;
		}
		default:
			w = (how & 1) ? write(fd, buf, len) : pwrite(fd, buf, len, (off_t)end);
			if (!(how & 1) && w > 0 &&
			    lseek(fd, (off_t)(end + (uint64_t)w), SEEK_SET) < 0)
				return perror("lseek"), 2;
		}
		if (w != (ssize_t)len)
			return perror("write"), 2;
		end += len;
		ack("%sW %u", a->tag, seq);
		if (seq % every == every - 1) {
			if (((how >> 1) & 1 ? fdatasync(fd) : fsync(fd)) != 0)
				return perror("fsync"), 2;
			ack("%sS %u", a->tag, seq);
		}
	}
}

int run_append(const char *dir, uint64_t seed, bool nosync)
{
	struct appender a = {dir, "append.dat", "", seed, nosync, true};
	return append_loop(&a);
}

static void *append_thread(void *arg)
{
	int rc = append_loop(arg);
	exit(rc); /* only on an error: the appender runs until killed */
}

int run_append_threads(const char *dir, uint64_t seed)
{
	static struct appender a[THREADS];
	static char files[THREADS][32], tags[THREADS][16];
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++) {
		snprintf(files[i], sizeof(files[i]), "append.%d.dat", i);
		snprintf(tags[i], sizeof(tags[i]), "T%d:", i);
		a[i] = (struct appender){dir,	files[i], tags[i], seed + 977u * (uint64_t)i,
					 false, false};
		if (pthread_create(&t[i], NULL, append_thread, &a[i]) != 0)
			return perror("pthread_create"), 2;
	}
	for (;;)
		pause();
}

/* Checks one appender's file against its acknowledgements (the lines
 * that start with tag). */
static int check_file(const char *dir, const char *file, const char *tag, char **acks, size_t n,
		      enum crash_mode m, enum crash_kind k)
{
	long last_b = -1, last_w = -1, last_s = -1;
	size_t tl = strlen(tag);
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (strncmp(acks[i], tag, tl) != 0)
			continue;
		const char *line = acks[i] + tl;
		if (sscanf(line, "B %u", &v) == 1)
			last_b = v;
		else if (sscanf(line, "W %u", &v) == 1)
			last_w = v;
		else if (sscanf(line, "S %u", &v) == 1)
			last_s = v;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	unsigned char *data;
	long size = read_file(path, &data);
	/* A kill leaves the kernel's page cache: every write that returned is
	 * there (POSIX mode's staged appends once recovery put them back). A
	 * power cut takes what POSIX mode did not fsync. */
	long need = m == MODE_POSIX && k == KIND_POWER ? last_s + 1 : last_w + 1;
	if (size < 0) {
		if (need > 0)
			violation("%s missing, %ld records acknowledged as durable", file, need);
		return 0;
	}
	/* Walk the stream: every byte must be the stream's. */
	unsigned char *rec = malloc(HDR + 6000);
	long pos = 0, intact = 0;
	while (pos < size) {
		size_t len = make_record(rec, (uint32_t)intact);
		size_t have = (size_t)(size - pos) < len ? (size_t)(size - pos) : len;
		if (memcmp(data + pos, rec, have) != 0) {
			size_t at = 0;
			while (data[pos + (long)at] == rec[at])
				at++;
			violation("%s: byte %ld (record %ld, offset %zu in it) is 0x%02x, the "
				  "stream has 0x%02x (%s)",
				  file, pos + (long)at, intact, at, data[pos + (long)at], rec[at],
				  data[pos + (long)at] == 0 ? "zeros" : "garbage");
			break;
		}
		if (have < len) {
			/* A partial record at the end. */
			if (m == MODE_STRICT)
				violation("%s: record %ld is torn (%zu of %zu bytes): strict "
					  "writes are all or nothing",
					  file, intact, have, len);
			if (intact > last_b)
				violation("%s: part of record %ld, never begun", file, intact);
			break;
		}
		pos += (long)len;
		intact++;
	}
	if (intact < need)
		violation("%s: %ld records intact, but %ld were acknowledged as durable "
			  "(%s; last write returned %ld, last fsync %ld)",
			  file, intact, need, m == MODE_POSIX ? "by fsync" : "by write", last_w,
			  last_s);
	if (intact > last_b + 1)
		violation("%s: %ld records, only %ld begun", file, intact, last_b + 1);
	printf("%s: %ld records intact (%ld bytes), begun %ld, written %ld, fsynced %ld\n", file,
	       intact, size, last_b + 1, last_w + 1, last_s + 1);
	free(rec);
	free(data);
	return 0;
}

int check_append(const char *dir, char **acks, size_t n, enum crash_mode m, enum crash_kind k)
{
	return check_file(dir, "append.dat", "", acks, n, m, k);
}

int check_append_threads(const char *dir, char **acks, size_t n, enum crash_mode m,
			 enum crash_kind k)
{
	for (int i = 0; i < THREADS; i++) {
		char file[32], tag[16];
		snprintf(file, sizeof(file), "append.%d.dat", i);
		snprintf(tag, sizeof(tag), "T%d:", i);
		int rc = check_file(dir, file, tag, acks, n, m, k);
		if (rc)
			return rc;
	}
	return 0;
}
