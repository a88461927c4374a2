/* SPDX-License-Identifier: Apache-2.0 */
/* Description: durability of fsync'ed appends when the writer dies by
 * SIGKILL. A child appends variable-size records (sequence number, length,
 * checksum, payload derived from the sequence number) and fsyncs every few
 * records, reporting through a pipe the last record each fsync made
 * durable; the parent kills it with SIGKILL once record K is reported (after
 * a random delay), drains the pipe for the last durable record S, then
 * checks the file through the library and with the raw kernel read: records
 * 0..S all there and intact, and after the last intact record at most a torn
 * prefix of the next (unsynced) record, nothing else. Then it trims that
 * tail, appends one more record with fsync and checks again. In some rounds
 * the parent also has the file open from halfway through (a reader in
 * another process), and checks through that descriptor as well.
 *
 *   killwriter DIR          three rounds (seeds 1-3): the self-check
 *   killwriter DIR SEED     one round; the seed picks K, the delay, the
 *                           fsync grouping, fsync/fdatasync, the descriptor
 *                           it goes through, O_APPEND or not and the reader
 *                           (tests/suites/durability.sh) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define MAGIC 0x4b57524bu /* "KWRK" */
#define HDR 16u
#define MAXPAY 6000u
#define NREC 200000u /* the child never gets this far before the kill */

/* The record with sequence number seq, byte for byte. */
static uint32_t rec_len(uint32_t seq)
{
	uint32_t x = seq * 2654435761u;
	x ^= x >> 15;
	/* Mostly small records, now and then one over a page. */
	return 1 + (x % 8 == 0 ? x % MAXPAY : x % 700);
}

static uint32_t fnv(uint32_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static size_t rec_make(unsigned char *buf, uint32_t seq)
{
	uint32_t len = rec_len(seq);
	uint32_t h[4] = {MAGIC, seq, len, 0};
	t_fill(buf + HDR, len, seq, 0);
	h[3] = fnv(fnv(2166136261u, (unsigned char *)h, 12), buf + HDR, len);
	memcpy(buf, h, HDR);
	return HDR + len;
}

static uint64_t rng_state;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

struct plan {
	uint32_t kill_at;  /* K: kill once record K is reported durable */
	uint32_t delay_us; /* then wait this long */
	uint32_t group;	   /* fsync every 1..group records (varying) */
	bool datasync, append;
	bool reader;  /* the parent has the file open (and reads it) meanwhile */
	int sync_via; /* fsync through: 0 the writing fd, 1 another O_WRONLY
		       * descriptor, 2 another O_RDONLY descriptor */
};

static struct plan make_plan(unsigned seed)
{
	rng_state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed * 0x100000001b3ull);
	for (int i = 0; i < 4; i++)
		rnd();
	struct plan pl;
	pl.kill_at = rnd() % 400;
	uint32_t d = rnd() % 4;
	pl.delay_us = d == 0 ? 0 : d == 1 ? rnd() % 100 : d == 2 ? rnd() % 2000 : rnd() % 20000;
	pl.group = 1 + rnd() % 8;
	pl.datasync = rnd() % 2;
	pl.append = rnd() % 2;
	pl.reader = rnd() % 3 == 0;
	pl.sync_via = (int)(rnd() % 3);
	return pl;
}

static void full_write(int fd, const void *b, size_t n)
{
	const char *p = b;
	while (n > 0) {
		ssize_t r = write(fd, p, n);
		if (r <= 0)
			_exit(3);
		p += r;
		n -= (size_t)r;
	}
}

/* The writer: appends records, fsyncs now and then, reports. */
static void child(const char *path, const struct plan *pl, int wfd)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | (pl->append ? O_APPEND : 0), 0644);
	if (fd < 0)
		_exit(2);
	int sfd = pl->sync_via == 0 ? fd : open(path, pl->sync_via == 1 ? O_WRONLY : O_RDONLY);
	if (sfd < 0)
		_exit(2);
	static unsigned char buf[HDR + MAXPAY];
	uint32_t next_sync = 1 + rnd() % pl->group;
	for (uint32_t seq = 0; seq < NREC; seq++) {
		full_write(fd, buf, rec_make(buf, seq));
		if (--next_sync == 0) {
			if ((pl->datasync ? fdatasync(sfd) : fsync(sfd)) != 0)
				_exit(4);
			if (write(wfd, &seq, sizeof(seq)) != sizeof(seq))
				_exit(5);
			next_sync = 1 + rnd() % pl->group;
		}
	}
	pause();
	_exit(0);
}

/* Checks one view of the file. Returns the number of intact records (-1
 * on a failed check) and sets *good_end to the offset after the last. */
static long check_view(const char *what, const unsigned char *d, long size, uint32_t synced,
		       long *good_end)
{
	static unsigned char want[HDR + MAXPAY];
	long off = 0;
	uint32_t seq = 0;
	for (;;) {
		size_t n = rec_make(want, seq);
		if (off + (long)n > size || memcmp(d + off, want, n) != 0)
			break;
		off += (long)n;
		seq++;
	}
	*good_end = off;
	bool ok = true;
	if (seq <= synced) {
		T_CHECK(false, "%s: only %u intact records, but 0..%u were fsync'ed", what, seq,
			synced);
		ok = false;
	}
	/* After the last intact record: at most a torn prefix of the next. */
	long tail = size - off;
	if (tail > 0) {
		size_t n = rec_make(want, seq);
		long same = 0;
		while (same < tail && d[off + same] == want[same])
			same++;
		if (same < tail || tail >= (long)n) {
			long zeros = 0;
			for (long i = off; i < size; i++)
				zeros += d[i] == 0;
			T_CHECK(false,
				"%s: %ld bytes after record %u (end %ld) are not a torn record %u "
				"(%zu bytes): first difference at +%ld, %ld of them zero",
				what, tail, seq ? seq - 1 : 0, off, seq, n, same, zeros);
			ok = false;
		}
	}
	return ok ? (long)seq : -1;
}

/* The file through the library: pread on a fresh descriptor, or on fd. */
static long read_lib(const char *path, int ofd, unsigned char **buf)
{
	int fd = ofd >= 0 ? ofd : open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	long size, got = t_read_fd(fd, buf, &size);
	if (ofd < 0)
		close(fd);
	return got >= 0 && got == size ? got : -1;
}

/* Both views, which must also agree. Returns intact records or -1. The
 * library view is through fd when it is open, else a fresh descriptor. */
static long check_both(const char *when, const char *path, int fd, uint32_t synced, long *good_end)
{
	char what[96];
	unsigned char *lib = NULL, *ker = NULL;
	long ls = read_lib(path, fd, &lib);
	long ks = t_read_kernel(path, &ker);
	long n = -1, kend = -1;
	T_CHECK(ls >= 0, "%s: read through the library", when);
	T_CHECK(ks >= 0, "%s: raw kernel read", when);
	if (ls >= 0 && ks >= 0) {
		snprintf(what, sizeof(what), "%s, kernel view", when);
		n = check_view(what, ker, ks, synced, &kend);
		snprintf(what, sizeof(what), "%s, library view", when);
		long ln = check_view(what, lib, ls, synced, good_end);
		if (ln < 0)
			n = -1;
		T_CHECK(ls == ks && memcmp(lib, ker, (size_t)ks) == 0,
			"%s: the library reads %ld bytes, the kernel file has %ld (or they differ)",
			when, ls, ks);
		if (*good_end != kend)
			n = -1;
	}
	free(lib);
	free(ker);
	return n;
}

static void one_round(const char *dir, unsigned seed)
{
	char name[64];
	snprintf(name, sizeof(name), "killwriter.%u.dat", seed);
	char *path = t_path(dir, name);
	unlink(path);
	struct plan pl = make_plan(seed);
	int pfd;
	pid_t pid = t_fork_pipe(&pfd);
	if (pid == 0) {
		child(path, &pl, pfd);
	}

	/* Wait for record K to be durable, wait a little more, kill. With a
	 * reader, the parent opens the file halfway and reads what the child
	 * reported durable by then. */
	uint32_t synced = 0, s;
	bool any = false;
	int rfd = -1;
	while (!(any && synced >= pl.kill_at) && read(pfd, &s, sizeof(s)) == sizeof(s)) {
		synced = s;
		any = true;
		if (pl.reader && rfd < 0 && synced >= pl.kill_at / 2) {
			rfd = open(path, O_RDONLY);
			T_CHECK(rfd >= 0, "seed %u: open for the reader", seed);
			long end = 0;
			unsigned char *d = NULL;
			long n = read_lib(path, rfd, &d);
			T_CHECK(n >= 0 &&
					check_view("reader while writing", d, n, synced, &end) >= 0,
				"seed %u: the reader while the child writes (%ld bytes)", seed, n);
			free(d);
		}
	}
	if (pl.delay_us) {
		struct timespec ts = {0, (long)pl.delay_us * 1000};
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	/* What the child reported before it died: durable for sure. */
	while (read(pfd, &s, sizeof(s)) == sizeof(s)) {
		synced = s;
		any = true;
	}
	close(pfd);
	T_REQUIRE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		  "seed %u: the writer was not killed by SIGKILL (status %#x)", seed, st);
	T_REQUIRE(any, "seed %u: the writer never reported an fsync", seed);

	long end = 0;
	long n = check_both("after the kill", path, -1, synced, &end);
	if (rfd >= 0) {
		long rend = 0;
		long rn = check_both("after the kill, the reader's descriptor", path, rfd, synced,
				     &rend);
		T_CHECK(rn == n && rend == end, "the reader's descriptor: %ld records, end %ld", rn,
			rend);
		close(rfd);
	}
	struct stat sb;
	long size = stat(path, &sb) == 0 ? (long)sb.st_size : -1;
	static const char *const via[] = {"", " on another O_WRONLY fd", " on another O_RDONLY fd"};
	printf("seed %u: K %u, delay %u us, %s every <=%u%s%s%s: killed with 0..%u durable; "
	       "%ld intact records, %ld-byte file, %ld torn bytes\n",
	       seed, pl.kill_at, pl.delay_us, pl.datasync ? "fdatasync" : "fsync", pl.group,
	       via[pl.sync_via], pl.append ? ", O_APPEND" : "", pl.reader ? ", reader" : "", synced,
	       n, size, size - end);
	if (n < 0)
		return;

	/* The file is usable after the crash: trim, append one more, fsync. */
	int fd = open(path, O_WRONLY);
	T_REQUIRE(fd >= 0, "reopen");
	T_CHECK(ftruncate(fd, end) == 0, "trim the torn tail");
	static unsigned char buf[HDR + MAXPAY];
	size_t len = rec_make(buf, (uint32_t)n);
	T_CHECK(pwrite(fd, buf, len, end) == (ssize_t)len, "append after the crash");
	T_CHECK(fsync(fd) == 0, "fsync after the crash");
	T_CHECK(close(fd) == 0, "close");
	long end2 = 0;
	long n2 = check_both("after the recovery append", path, -1, (uint32_t)n, &end2);
	T_CHECK(n2 == n + 1 && end2 == end + (long)len && stat(path, &sb) == 0 &&
			sb.st_size == end2,
		"after the recovery append: %ld records (want %ld), end %ld (want %ld)", n2, n + 1,
		end2, end + (long)len);
	unlink(path);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2) {
		one_round(dir, (unsigned)strtoul(argv[2], NULL, 0));
	} else {
		for (unsigned seed = 1; seed <= 3; seed++)
			one_round(dir, seed);
	}
	return t_result();
}
