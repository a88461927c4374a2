/* SPDX-License-Identifier: Apache-2.0 */
/* Description: how durable log records scale with threads on this kernel
 * file system, by where each thread's records go. Each thread writes
 * 4160-byte records (the operation log's record of a 4 KiB write: a 64-byte
 * entry and its payload), each with one pwritev2(RWF_DSYNC), into files
 * pre-filled with zeros and fsynced (as the library's log is):
 *
 *   shared   one file; each record at the next offset of one shared tail
 *            (fetch-and-add), so neighbouring records of different threads
 *            share pages: the library's log up to this program's commit
 *   lanes    one file; each thread takes 64 KiB chunks from the shared tail
 *            and fills its own chunk, so no two threads' records share a page
 *   padded   one file, one shared tail, every record padded to 8 KiB (page
 *            aligned): lanes' page separation without lanes
 *   shared_cold, lanes_cold  as shared and lanes, on a file whose page
 *            cache was dropped after it was zeroed: the zero-fill's 1 MiB
 *            writes leave large folios (up to 2 MiB) that records of every
 *            thread then share; records written into no cache get small ones
 *   direct   one file, page cache dropped, one shared tail, every record
 *            padded to 8 KiB and written with O_DIRECT (after a copy into an
 *            aligned buffer, as the library would have to)
 *   files    one file per thread (what separate processes' logs are)
 *   kernel   the kernel's own durable append: O_DSYNC 4 KiB writes at the
 *            end of a new file per thread (FxMark DWAL with FXMARK_DSYNC)
 *
 * For each kind and thread count, a line of JSON per point: records/s over
 * the time the threads ran (the second, or less when the file filled up
 * first: file_full).
 *
 *   logscale DIR [SECONDS] [THREADS...]   default 1 s, 1 2 4 8 16 threads
 *   env LOGSCALE_KINDS=shared,lanes,...   (default: all) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/bench.h"

#define RECORD 4160
#define PADDED 8192
#define CHUNK (64 << 10)
#define FILE_SIZE                                                                                  \
	(512ull << 20) /* the shared file; a thread's own: this / threads, 32 MiB at least */
#define MAX_THREADS 64

enum kind { SHARED, LANES, PADDED_KIND, SHARED_COLD, LANES_COLD, DIRECT, FILES, KERNEL };
static const char *const kind_names[] = {"shared",     "lanes",	 "padded", "shared_cold",
					 "lanes_cold", "direct", "files",  "kernel"};

/* Kinds that write into one file, and of those, which start with its page
 * cache dropped (the zeros on the device only), and which write around it. */
static bool one_file(enum kind k)
{
	return k != FILES && k != KERNEL;
}
static bool cold(enum kind k)
{
	return k == SHARED_COLD || k == LANES_COLD || k == DIRECT;
}

static struct {
	enum kind kind;
	const char *dir;
	int shared_fd;
	_Atomic uint64_t tail; /* SHARED, LANES, PADDED: next free byte of shared_fd */
	_Atomic bool stop;
	_Atomic int failed;
} R;

struct worker {
	pthread_t t;
	int id;
	int fd;		  /* FILES, KERNEL: the thread's own file */
	uint64_t size;	  /* FILES: its size */
	uint64_t ops;	  /* records written */
	uint64_t done_ns; /* when it stopped: told to, or its file full */
	bool full;	  /* its file (or the shared one) was full */
} __attribute__((aligned(64)));

/* The next record's offset in this worker's place, or UINT64_MAX once its
 * file is full (the run is then over for it). */
static uint64_t next_offset(struct worker *w, uint64_t *lane_next, uint64_t *lane_end)
{
	switch (R.kind) {
	case SHARED:
	case SHARED_COLD: {
		uint64_t off = atomic_fetch_add(&R.tail, RECORD);
		return off + RECORD <= FILE_SIZE ? off : UINT64_MAX;
	}
	case PADDED_KIND:
	case DIRECT: {
		uint64_t off = atomic_fetch_add(&R.tail, PADDED);
		return off + PADDED <= FILE_SIZE ? off : UINT64_MAX;
	}
	case LANES:
	case LANES_COLD:
		if (*lane_next + RECORD > *lane_end) {
			uint64_t c = atomic_fetch_add(&R.tail, CHUNK);
			if (c + CHUNK > FILE_SIZE)
				return UINT64_MAX;
			*lane_next = c;
			*lane_end = c + CHUNK;
		}
		*lane_next += RECORD;
		return *lane_next - RECORD;
	case FILES: {
		uint64_t off = w->ops * RECORD;
		return off + RECORD <= w->size ? off : UINT64_MAX;
	}
	case KERNEL:
		return 0; /* O_APPEND */
	}
	return UINT64_MAX;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char rec[RECORD];
	static __thread char aligned[PADDED] __attribute__((aligned(4096)));
	memset(rec, 0x5a ^ w->id, sizeof(rec));
	uint64_t lane_next = 0, lane_end = 0;
	int fd = one_file(R.kind) ? R.shared_fd : w->fd;
	while (!atomic_load_explicit(&R.stop, memory_order_relaxed)) {
		uint64_t off = next_offset(w, &lane_next, &lane_end);
		if (off == UINT64_MAX) {
			w->full = true;
			break;
		}
		ssize_t n;
		if (R.kind == KERNEL) {
			n = write(fd, rec, 4096);
			if (n != 4096)
				goto fail;
		} else if (R.kind == DIRECT) {
			memcpy(aligned, rec, RECORD);
			n = pwrite(w->fd, aligned, PADDED, (off_t)off);
			if (n != PADDED)
				goto fail;
		} else {
			struct iovec v = {rec, RECORD};
			n = pwritev2(fd, &v, 1, (off_t)off, RWF_DSYNC);
			if (n != RECORD)
				goto fail;
		}
		w->ops++;
	}
	w->done_ns = bench_ns();
	return NULL;
fail:
	atomic_store(&R.failed, errno ? errno : EIO);
	return NULL;
}

static int run_point(enum kind kind, int threads, double seconds)
{
	static struct worker ws[MAX_THREADS];
	char path[4096], shared[4096];
	snprintf(shared, sizeof(shared), "%s/logscale.shared", R.dir);
	R.kind = kind;
	R.shared_fd = -1;
	atomic_store(&R.tail, 0);
	atomic_store(&R.stop, false);
	if (one_file(kind)) {
		R.shared_fd = bench_zero_file(shared, FILE_SIZE);
		if (R.shared_fd < 0)
			return bench_fail(shared);
		if (cold(kind) && posix_fadvise(R.shared_fd, 0, 0, POSIX_FADV_DONTNEED) != 0)
			return bench_fail("posix_fadvise");
	}
	for (int i = 0; i < threads; i++) {
		ws[i] = (struct worker){.id = i, .fd = -1};
		snprintf(path, sizeof(path), "%s/logscale.%d", R.dir, i);
		if (kind == FILES) {
			ws[i].size = FILE_SIZE / (uint64_t)threads;
			if (ws[i].size < (32u << 20))
				ws[i].size = 32u << 20;
			ws[i].fd = bench_zero_file(path, ws[i].size);
		} else if (kind == KERNEL)
			ws[i].fd =
				open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_DSYNC, 0600);
		else if (kind == DIRECT) /* its own descriptor: O_DIRECT|O_DSYNC */
			ws[i].fd = open(shared, O_WRONLY | O_DIRECT | O_DSYNC);
		if ((!one_file(kind) || kind == DIRECT) && ws[i].fd < 0)
			return bench_fail(kind == DIRECT ? shared : path);
	}
	uint64_t t0 = bench_ns();
	for (int i = 0; i < threads; i++)
		pthread_create(&ws[i].t, NULL, work, &ws[i]);
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&R.stop, true);
	uint64_t ops = 0, end = t0;
	bool full = false;
	for (int i = 0; i < threads; i++) {
		pthread_join(ws[i].t, NULL);
		ops += ws[i].ops;
		end = ws[i].done_ns > end ? ws[i].done_ns : end;
		full |= ws[i].full;
	}
	/* Over the time the workers ran: a file filled before the second
	 * was up stops them early (the rate is still theirs). */
	double secs = (double)(end - t0) * 1e-9;
	for (int i = 0; i < threads; i++) {
		if (ws[i].fd >= 0)
			close(ws[i].fd);
		snprintf(path, sizeof(path), "%s/logscale.%d", R.dir, i);
		unlink(path);
	}
	if (R.shared_fd >= 0) {
		close(R.shared_fd);
		unlink(shared);
	}
	if (atomic_load(&R.failed)) {
		errno = atomic_load(&R.failed);
		return bench_fail("record write");
	}
	printf("{\"metric\":\"%s_t%d\",\"value\":%.0f,\"unit\":\"ops/s\",\"better\":\"higher\","
	       "\"file_full\":%s}\n",
	       kind_names[kind], threads, (double)ops / secs, full ? "true" : "false");
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: logscale DIR [SECONDS] [THREADS...]\n");
		return 2;
	}
	R.dir = argv[1];
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	int counts[16] = {1, 2, 4, 8, 16}, ncounts = 5;
	if (argc > 3) {
		ncounts = 0;
		for (int i = 3; i < argc && ncounts < 16; i++) {
			int n = atoi(argv[i]);
			if (n < 1 || n > MAX_THREADS) {
				fprintf(stderr, "logscale: 1 to %d threads\n", MAX_THREADS);
				return 2;
			}
			counts[ncounts++] = n;
		}
	}
	const char *kinds = getenv("LOGSCALE_KINDS");
	for (int c = 0; c < ncounts; c++)
		for (int k = SHARED; k <= KERNEL; k++)
			if (bench_want(kinds, kind_names[k]) && run_point(k, counts[c], seconds))
				return 1;
	return 0;
}
