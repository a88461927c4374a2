/* SPDX-License-Identifier: Apache-2.0 */
/* Description: read(2) and write(2) of a regular file are atomic with
 * respect to each other (POSIX 2.9.7; XFS holds the inode lock across
 * both). Two writers rewrite disjoint 8 KiB units of one file, each unit
 * whole with one stamp (pwrite of 8 KiB, or pwritev of two 4 KiB pieces),
 * while two readers read units (pread of 8 KiB, preadv of three odd pieces)
 * and single 4 KiB blocks: every read must hold one stamp only. Once with
 * threads of one process, once with threads whose writes overlap (then
 * every unit of the file must also end as one write's; the file is
 * fsynced first, so that in sync mode its overwrites take the unlocked
 * path), once with two writer and two reader processes, and once more with
 * readers that open the file for each read (a descriptor's first reads are
 * the kernel's, without an inode: src/fs/fdtable.h). Then once more with
 * threads whose writers fsync every few writes: small synced overwrites,
 * which the library makes with the kernel's pwrite rather than stores, in
 * POSIX mode without the inode lock (src/fs/data.c, overwrite_unlocked).
 * Knobs: TORN_READS (reads per run, default 1000000), TORN_SECONDS (time
 * cap per run, default 4). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define UNIT 8192
#define UNITS 64 /* 512 KiB */
#define WORDS (UNIT / 8)

struct shared {
	atomic_int stop;
	atomic_long reads;
	atomic_long torn;
	atomic_long errors;
	char example[160]; /* the first torn read seen */
};

static int fd;
static struct shared *sh;
static long want_reads;
static bool overlap;	   /* writers write any unit, not only their own */
static int sync_every;	   /* writers fsync after this many writes (0: never) */
static const char *reopen; /* readers open this path for each read (pending reads) */
static double max_seconds;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Writer w owns the units u with u % 2 == w. Stamps are never 0. */
static void writer(int w)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(w + 1), buf[WORDS];
	for (uint64_t n = 1; !atomic_load(&sh->stop); n++) {
		int u = overlap ? (int)(rnd(&seed) % UNITS) :
				  (int)(rnd(&seed) % (UNITS / 2)) * 2 + w;
		uint64_t stamp = ((uint64_t)w << 60) | n;
		for (int i = 0; i < WORDS; i++)
			buf[i] = stamp;
		ssize_t r;
		if (n % 2) {
			r = pwrite(fd, buf, UNIT, (off_t)u * UNIT);
		} else {
			struct iovec v[2] = {{buf, UNIT / 2}, {(char *)buf + UNIT / 2, UNIT / 2}};
			r = pwritev(fd, v, 2, (off_t)u * UNIT);
		}
		if (r != UNIT || (sync_every && n % (uint64_t)sync_every == 0 && fsync(fd) != 0))
			atomic_fetch_add(&sh->errors, 1);
	}
}

/* Every word of [buf, buf + n) holds the same non-zero stamp. */
static bool whole(const uint64_t *buf, size_t words, char *what, size_t whatlen, int u)
{
	for (size_t i = 1; i < words; i++)
		if (buf[i] != buf[0]) {
			snprintf(what, whatlen, "unit %d: word 0 stamp %#llx, word %zu stamp %#llx",
				 u, (unsigned long long)buf[0], i, (unsigned long long)buf[i]);
			return false;
		}
	return buf[0] != 0 || (snprintf(what, whatlen, "unit %d: zeros", u), false);
}

static void reader(int id)
{
	uint64_t seed = 0x2545f4914f6cdd1dull * (uint64_t)(id + 7), buf[WORDS];
	double end = now() + max_seconds;
	for (long n = 0; !atomic_load(&sh->stop); n++) {
		int u = (int)(rnd(&seed) % UNITS);
		off_t off = (off_t)u * UNIT;
		size_t len = UNIT;
		ssize_t r;
		int rfd = reopen ? open(reopen, O_RDONLY) : fd;
		switch (n % 3) {
		case 0:
			r = pread(rfd, buf, UNIT, off);
			break;
		case 1: {
			struct iovec v[3] = {{buf, 1000},
					     {(char *)buf + 1000, 5000},
					     {(char *)buf + 6000, UNIT - 6000}};
			r = preadv(rfd, v, 3, off);
			break;
		}
		default:
			len = UNIT / 2;
			r = pread(rfd, buf, len, off + (off_t)(n % 2) * UNIT / 2);
			break;
		}
		if (reopen)
			close(rfd);
		char what[160];
		if (r != (ssize_t)len) {
			atomic_fetch_add(&sh->errors, 1);
		} else if (!whole(buf, len / 8, what, sizeof(what), u)) {
			if (atomic_fetch_add(&sh->torn, 1) == 0)
				snprintf(sh->example, sizeof(sh->example), "%s", what);
		}
		long total = atomic_fetch_add(&sh->reads, 1) + 1;
		if (total >= want_reads || ((n & 1023) == 0 && now() > end))
			atomic_store(&sh->stop, 1);
	}
}

static void *thread_main(void *arg)
{
	int id = (int)(intptr_t)arg;
	if (id < 2)
		writer(id);
	else
		reader(id - 2);
	return NULL;
}

/* synced: the file fsynced once filled, so that in sync mode the log holds
 * no record of it and its overwrites are the kernel's durable writes, made
 * under the locks of their stripes only (fs/logged.c); otherwise they are
 * logged, under the inode lock. */
static void setup(const char *dir, const char *name, bool synced)
{
	const char *path = t_path(dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open %s", path);
	uint64_t buf[WORDS];
	for (int u = 0; u < UNITS; u++) {
		for (int i = 0; i < WORDS; i++)
			buf[i] = ((uint64_t)(u % 2) << 60) | 0xffffff;
		T_REQUIRE(write(fd, buf, UNIT) == UNIT, "fill unit %d", u);
	}
	T_REQUIRE(!synced || fsync(fd) == 0, "fsync");
	memset(sh, 0, sizeof(*sh));
}

static void report(const char *how)
{
	long reads = atomic_load(&sh->reads), torn = atomic_load(&sh->torn);
	printf("%s: %ld reads, %ld torn, %ld errors\n", how, reads, torn,
	       (long)atomic_load(&sh->errors));
	T_CHECK(torn == 0, "%s: %ld of %ld reads returned a torn unit (first: %s)", how, torn,
		reads, sh->example);
	T_CHECK(atomic_load(&sh->errors) == 0, "%s: %ld short or failed reads/writes", how,
		(long)atomic_load(&sh->errors));
	T_CHECK(reads > 0, "%s: no read ran", how);
}

/* Every unit of the file holds one stamp: no two writes interleaved. */
static void check_units(const char *path, const char *how)
{
	unsigned char *data;
	long n = t_read_kernel(path, &data);
	T_REQUIRE(n == (long)UNITS * UNIT, "%s: size %ld", how, n);
	char what[160];
	int mixed = 0;
	for (int u = 0; u < UNITS; u++) {
		uint64_t words[WORDS];
		memcpy(words, data + (long)u * UNIT, UNIT);
		if (!whole(words, WORDS, what, sizeof(what), u) && mixed++ == 0)
			fprintf(stderr, "%s: %s\n", how, what);
	}
	T_CHECK(mixed == 0, "%s: %d units hold bytes of two writes", how, mixed);
	free(data);
}

static void with_threads(const char *dir, bool any_unit, int syncs)
{
	overlap = any_unit;
	sync_every = syncs;
	const char *name = syncs ? "torn.synced" : any_unit ? "torn.overlap" : "torn.threads";
	const char *how = syncs	   ? "threads, synced every few writes" :
			  any_unit ? "threads, overlapping writes" :
				     "threads";
	/* Overlapping or synced writers: unlocked ones too. */
	setup(dir, name, any_unit || syncs);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		T_REQUIRE(pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i) == 0,
			  "pthread_create");
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	close(fd);
	report(how);
	check_units(t_path(dir, name), how);
	sync_every = 0;
}

/* The same with processes: each opens the file itself (a forked child
 * would share the parent's open file; here each has its own, as two
 * programs would). */
static void with_processes(const char *dir, bool fresh_reads)
{
	setup(dir, "torn.procs", false);
	close(fd);
	const char *path = t_path(dir, "torn.procs");
	reopen = fresh_reads ? path : NULL;
	pid_t pid[4];
	for (int i = 0; i < 4; i++) {
		pid[i] = fork();
		T_REQUIRE(pid[i] >= 0, "fork");
		if (pid[i] == 0) {
			fd = open(path, O_RDWR);
			if (fd < 0)
				_exit(2);
			thread_main((void *)(intptr_t)i);
			close(fd);
			_exit(0);
		}
	}
	for (int i = 0; i < 4; i++) {
		int st;
		T_CHECK(waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			"process %d ended with status %#x", i, st);
	}
	report(fresh_reads ? "processes, a fresh open for each read" : "processes");
	reopen = NULL;
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc > 1, "usage: torn_reads DIR");
	const char *r = getenv("TORN_READS"), *s = getenv("TORN_SECONDS");
	want_reads = r ? atol(r) : 1000000;
	max_seconds = s ? atof(s) : 4;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_REQUIRE(sh != MAP_FAILED, "mmap");
	with_threads(argv[1], false, 0);
	with_threads(argv[1], true, 0);
	overlap = false;
	with_processes(argv[1], false);
	with_processes(argv[1], true);
	with_threads(argv[1], true, 4);
	return t_result();
}
