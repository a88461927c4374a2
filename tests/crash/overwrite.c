/* SPDX-License-Identifier: Apache-2.0 */
/* The overwriter: over.dat holds NSLOT slots of SLOTPAGES pages. It is
 * written whole (version 0) and fsynced first ("I"), then slots chosen at
 * random are rewritten whole with the next version, one pwrite, pwritev or
 * lseek+write per slot, fsync every 1-8 writes. Every page carries its
 * slot, version, page number and a CRC, so each page tells which write it
 * came from.
 *
 * Guarantees checked, per slot (lo = the newest version acknowledged as
 * durable, hi = the newest begun):
 *   all modes   every page is an intact page of this slot with a version in
 *               [lo, hi], except in posix and sync modes the pages of a
 *               write in flight at the crash (begun, not returned): each
 *               of their bytes is the old version's or the new one's. A
 *               write is not atomic there, and a store through a mapping
 *               stops wherever the kill lands (the kernel's write stops at
 *               a page boundary): seen on DAX, 2 of 400 kill points
 *   posix       lo: the last version an fsync returned for (a power cut);
 *               the last version written (a killed process: overwrites are
 *               in the page cache)
 *   sync        lo: the last version whose write returned
 *   strict      as sync, and all pages of the slot of one version (a write
 *               is all or nothing)
 *   all modes   the file's modification time is no older than the one
 *               fstat gave after the last fsync ("T ns"), less TIME_SLACK:
 *               an fsync makes the times durable too. A replayed record
 *               gives the time its write was logged at, a moment before
 *               the kernel's own; a time lost comes back as the file's
 *               making, seconds older.
 *
 * The overthreads workload is the same with 4 threads rewriting disjoint
 * slots of one descriptor at once (pwrite or pwritev: the offset is
 * shared), each fsyncing on its own ("S t" makes thread t's slots
 * durable): writers of one file that the library lets run at once. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crash.h"

#define TIME_SLACK_NS 10000000LL /* 10 ms */

static long long mtime_ns(const struct stat *st)
{
	return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

#define NSLOT 64
#define SLOTPAGES 4
#define PAGE 4096
#define SLOT (SLOTPAGES * PAGE)
#define MAGIC 0x5245564fu /* "OVER" */

struct page_hdr {
	uint32_t magic, slot, version, page, crc;
};

static void make_slot(unsigned char *buf, uint32_t slot, uint32_t version)
{
	for (uint32_t p = 0; p < SLOTPAGES; p++) {
		unsigned char *pg = buf + p * PAGE;
		struct page_hdr h = {MAGIC, slot, version, p, 0};
		fill_stream(pg + sizeof(h), PAGE - sizeof(h), mix32(slot << 20 ^ version << 3 ^ p),
			    0);
		h.crc = crc32_sw(crc32_sw(0, &h, 16), pg + sizeof(h), PAGE - sizeof(h));
		memcpy(pg, &h, sizeof(h));
	}
}

/* The file written whole (version 0), fsynced and closed; then opened again,
 * as a program opens a file it made before (sync mode's overwrites of a file
 * the log holds no record of are the kernel's durable writes); its
 * descriptor. */
static int make_file(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/over.dat", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return perror(path), -1;
	unsigned char *buf = malloc(SLOT);
	for (uint32_t s = 0; s < NSLOT; s++) {
		make_slot(buf, s, 0);
		if (pwrite(fd, buf, SLOT, (off_t)s * SLOT) != SLOT)
			return perror("pwrite"), -1;
	}
	free(buf);
	if (fsync(fd) != 0 || close(fd) != 0)
		return perror("fsync"), -1;
	ack("I");
	fd = open(path, O_RDWR);
	if (fd < 0)
		return perror(path), -1;
	return fd;
}

/* Slot s rewritten whole with version v (in buf), one pwrite, pwritev or
 * lseek+write (own: the descriptor is this thread's alone). */
static ssize_t write_slot(int fd, unsigned char *buf, uint32_t s, uint64_t *seed, bool own)
{
	off_t at = (off_t)s * SLOT;
	switch (rnd(seed) % (own ? 3 : 2)) {
	case 0:
		return pwrite(fd, buf, SLOT, at);
	case 1: {
		struct iovec iv[SLOTPAGES];
		for (int p = 0; p < SLOTPAGES; p++)
			iv[p] = (struct iovec){buf + p * PAGE, PAGE};
		return pwritev(fd, iv, SLOTPAGES, at);
	}
	default:
		return lseek(fd, at, SEEK_SET) == at ? write(fd, buf, SLOT) : -1;
	}
}

int run_overwrite(const char *dir, uint64_t seed)
{
	int fd = make_file(dir);
	if (fd < 0)
		return 2;
	unsigned char *buf = malloc(SLOT);
	uint32_t ver[NSLOT] = {0};
	unsigned every = 1 + rnd(&seed) % 8;
	for (unsigned i = 0;; i++) {
		uint32_t s = rnd(&seed) % NSLOT, v = ++ver[s];
		make_slot(buf, s, v);
		ack("B %u %u", s, v);
		if (write_slot(fd, buf, s, &seed, true) != SLOT)
			return perror("write"), 2;
		ack("W %u %u", s, v);
		if (i % every == every - 1) {
			struct stat st;
			if (fsync(fd) != 0 || fstat(fd, &st) != 0)
				return perror("fsync"), 2;
			ack("S");
			ack("T %lld", mtime_ns(&st));
		}
	}
}

/* overthreads: THREADS threads of one process rewrite the slots of one
 * descriptor at once, thread t the slots s with s % THREADS == t, each
 * with its own fsync cadence ("S t": its own slots are durable). */
#define THREADS 4

struct overwriter {
	int fd, id;
	uint64_t seed;
};

static void *overwrite_thread(void *arg)
{
	struct overwriter *o = arg;
	unsigned char *buf = malloc(SLOT);
	uint32_t ver[NSLOT / THREADS] = {0};
	unsigned every = 1 + rnd(&o->seed) % 8;
	for (unsigned i = 0;; i++) {
		uint32_t k = rnd(&o->seed) % (NSLOT / THREADS), v = ++ver[k];
		uint32_t s = k * THREADS + (uint32_t)o->id;
		make_slot(buf, s, v);
		ack("B %u %u", s, v);
		if (write_slot(o->fd, buf, s, &o->seed, false) != SLOT)
			exit((perror("write"), 2));
		ack("W %u %u", s, v);
		if (i % every == every - 1) {
			if (fsync(o->fd) != 0)
				exit((perror("fsync"), 2));
			ack("S %d", o->id);
		}
	}
	return NULL;
}

int run_overwrite_threads(const char *dir, uint64_t seed)
{
	static struct overwriter o[THREADS];
	int fd = make_file(dir);
	if (fd < 0)
		return 2;
	for (int i = 0; i < THREADS; i++) {
		o[i] = (struct overwriter){fd, i, seed + 977u * (uint64_t)i};
		pthread_t t;
		if (pthread_create(&t, NULL, overwrite_thread, &o[i]) != 0)
			return perror("pthread_create"), 2;
	}
	for (;;)
		pause();
}

/* Whether every byte of page p of slot s is version a's or version b's. */
static bool page_mix(const unsigned char *pg, uint32_t s, uint32_t p, uint32_t a, uint32_t b)
{
	static unsigned char va[SLOT], vb[SLOT];
	make_slot(va, s, a);
	make_slot(vb, s, b);
	for (size_t i = 0; i < PAGE; i++) {
		size_t at = (size_t)p * PAGE + i;
		if (pg[i] != va[at] && pg[i] != vb[at])
			return false;
	}
	return true;
}

int check_overwrite(const char *dir, char **acks, size_t n, enum crash_mode m, enum crash_kind k)
{
	long began[NSLOT], wrote[NSLOT], synced[NSLOT];
	long long synced_time = 0;
	bool init = false;
	for (int s = 0; s < NSLOT; s++)
		began[s] = wrote[s] = synced[s] = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned s, v;
		if (strcmp(acks[i], "I") == 0) {
			init = true;
		} else if (sscanf(acks[i], "B %u %u", &s, &v) == 2 && s < NSLOT) {
			began[s] = v;
		} else if (sscanf(acks[i], "W %u %u", &s, &v) == 2 && s < NSLOT) {
			wrote[s] = v;
		} else if (sscanf(acks[i], "T %lld", &synced_time) == 1) { /* after an fsync */
		} else if (strcmp(acks[i], "S") == 0) {
			memcpy(synced, wrote, sizeof(synced));
		} else if (sscanf(acks[i], "S %u", &s) == 1) { /* overthreads */
			for (unsigned t = s; t < NSLOT; t += THREADS)
				synced[t] = wrote[t];
		}
	}
	if (!init) {
		printf("overwrite: killed before the file was complete: nothing to check\n");
		return 0;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/over.dat", dir);
	unsigned char *data;
	long size = read_file(path, &data);
	if (size != (long)NSLOT * SLOT) {
		violation("over.dat: %ld bytes, it was %d when fsynced", size, NSLOT * SLOT);
		free(data);
		return 0;
	}
	struct stat st;
	if (stat(path, &st) == 0 && mtime_ns(&st) < synced_time - TIME_SLACK_NS)
		violation("over.dat: modified %.3f s before the time its last fsync returned with",
			  (double)(synced_time - mtime_ns(&st)) / 1e9);
	long torn = 0, newer = 0, inpage = 0;
	for (int s = 0; s < NSLOT; s++) {
		long lo = (m == MODE_POSIX && k == KIND_POWER) ? synced[s] : wrote[s];
		long hi = began[s], first = -1;
		for (int p = 0; p < SLOTPAGES; p++) {
			unsigned char *pg = data + (long)s * SLOT + p * PAGE;
			struct page_hdr h;
			memcpy(&h, pg, sizeof(h));
			uint32_t crc = h.crc;
			h.crc = 0;
			if (h.magic != MAGIC || h.slot != (uint32_t)s || h.page != (uint32_t)p ||
			    crc != crc32_sw(crc32_sw(0, &h, 16), pg + sizeof(h),
					    PAGE - sizeof(h))) {
				if (m != MODE_STRICT && hi > wrote[s] &&
				    page_mix(pg, (uint32_t)s, (uint32_t)p, (uint32_t)wrote[s],
					     (uint32_t)hi)) {
					inpage++;
					continue;
				}
				violation(
					"over.dat: slot %d page %d is not an intact page of that slot "
					"(%s)",
					s, p, pg[100] == 0 && pg[2000] == 0 ? "zeros" : "garbage");
				continue;
			}
			if ((long)h.version < lo || (long)h.version > hi)
				violation(
					"over.dat: slot %d page %d has version %u; acknowledged %ld, "
					"begun %ld",
					s, p, h.version, lo, hi);
			if (first < 0)
				first = h.version;
			else if (first != (long)h.version)
				torn++;
			if ((long)h.version > wrote[s])
				newer++;
			if (first >= 0 && first != (long)h.version && m == MODE_STRICT)
				violation(
					"over.dat: slot %d is torn (page 0 version %ld, page %d version "
					"%u): strict writes are all or nothing",
					s, first, p, h.version);
		}
	}
	printf("overwrite: %d slots checked, %ld torn pages (allowed outside strict), %ld pages of "
	       "an unacknowledged write, %ld pages torn within by the write in flight\n",
	       NSLOT, torn, newer, inpage);
	free(data);
	return 0;
}
