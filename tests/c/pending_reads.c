/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a file opened only for reading is read through the kernel
 * for its first reads and managed after (fs/fdtable.h, pending
 * descriptors); every read returns what the kernel's would, across that
 * change:
 *  - one reader with read(): each block once, in order, the offset right
 *    after every read;
 *  - a reader, then a writer of the same file in the same process that
 *    appends: the reader reads the appends and sees the new size;
 *  - threads reading one descriptor with read() at once: every block read
 *    by exactly one of them, none twice, none lost;
 *  - threads each opening, reading and closing a file of its own over and
 *    over (a server of small files), while another makes descriptors past
 *    the library's table so that it grows under them: every read returns
 *    its file's block;
 *  - threads each reading fresh files of their own past their pending
 *    reads while the table grows under them, in fresh processes: every
 *    descriptor is managed after its pending reads (a count of its kernel
 *    calls lost to a grow would leave it the kernel's for good). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define BLOCK 4096
#define BLOCKS 64

/* A file of n blocks, block i holding stream seed's bytes with its index in
 * its first 4 bytes; written by a child, so that this process opens it as
 * a file it has never had (a pending descriptor under the library). */
static void make_file(const char *path, int n, unsigned seed)
{
	pid_t c = fork();
	T_REQUIRE(c >= 0, "fork");
	if (c == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		unsigned char b[BLOCK];
		for (int i = 0; fd >= 0 && i < n; i++) {
			t_fill(b, BLOCK, seed, (long)i * BLOCK);
			memcpy(b, &i, sizeof(i));
			if (write(fd, b, BLOCK) != BLOCK)
				_exit(1);
		}
		_exit(fd >= 0 && close(fd) == 0 ? 0 : 1);
	}
	int st;
	T_REQUIRE(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the child that writes %s", path);
}

static bool block_ok(const unsigned char *b, int i, unsigned seed)
{
	unsigned char want[BLOCK];
	t_fill(want, BLOCK, seed, (long)i * BLOCK);
	memcpy(want, &i, sizeof(i));
	return memcmp(b, want, BLOCK) == 0;
}

static void one_reader(const char *dir)
{
	char *p = t_path(dir, "one");
	make_file(p, BLOCKS, 1);
	int fd = open(p, O_RDONLY);
	T_REQUIRE(fd >= 0, "open");
	unsigned char b[BLOCK];
	for (int i = 0; i < BLOCKS; i++) {
		ssize_t r = read(fd, b, BLOCK);
		T_CHECK(r == BLOCK && block_ok(b, i, 1), "read %d: %zd bytes, or not block %d", i,
			r, i);
		off_t at = lseek(fd, 0, SEEK_CUR);
		T_CHECK(at == (off_t)(i + 1) * BLOCK, "offset %lld after read %d", (long long)at,
			i);
	}
	T_CHECK(read(fd, b, BLOCK) == 0, "read at the end");
	close(fd);
}

static void reader_then_writer(const char *dir)
{
	char *p = t_path(dir, "append");
	make_file(p, 4, 2);
	int r = open(p, O_RDONLY);
	T_REQUIRE(r >= 0, "open reader");
	unsigned char b[BLOCK];
	T_CHECK(read(r, b, BLOCK) == BLOCK && block_ok(b, 0, 2), "first read");
	int w = open(p, O_WRONLY | O_APPEND);
	T_REQUIRE(w >= 0, "open writer");
	/* More appends than a lease needs (fs/lease.c). */
	for (int i = 4; i < BLOCKS; i++) {
		t_fill(b, BLOCK, 2, (long)i * BLOCK);
		memcpy(b, &i, sizeof(i));
		T_REQUIRE(write(w, b, BLOCK) == BLOCK, "append %d", i);
	}
	struct stat st;
	T_CHECK(fstat(r, &st) == 0 && st.st_size == (off_t)BLOCKS * BLOCK,
		"the reader's fstat: %lld bytes, want %d", (long long)st.st_size, BLOCKS * BLOCK);
	for (int i = 1; i < BLOCKS; i++) {
		ssize_t n = read(r, b, BLOCK);
		T_CHECK(n == BLOCK && block_ok(b, i, 2), "read %d after the appends: %zd bytes", i,
			n);
	}
	T_CHECK(read(r, b, BLOCK) == 0, "read at the end");
	close(w);
	close(r);
}

#define THREADS 4
#define SHARED_BLOCKS 256

struct shared {
	int fd;
	int seen[SHARED_BLOCKS];
	pthread_mutex_t lock;
	int bad;
};

static void *read_share(void *arg)
{
	struct shared *s = arg;
	unsigned char b[BLOCK];
	for (;;) {
		ssize_t n = read(s->fd, b, BLOCK);
		if (n <= 0)
			break;
		int i;
		memcpy(&i, b, sizeof(i));
		pthread_mutex_lock(&s->lock);
		if (n != BLOCK || i < 0 || i >= SHARED_BLOCKS || !block_ok(b, i, 3))
			s->bad++;
		else
			s->seen[i]++;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

static void threads_share(const char *dir)
{
	for (int round = 0, n = t_scaled(20, 5); round < n; round++) { /* SFS_TEST_SCALE */
		/* A new file each round: a file read before has an inode now. */
		char name[32];
		snprintf(name, sizeof(name), "shared.%d", round);
		char *p = t_path(dir, name);
		make_file(p, SHARED_BLOCKS, 3);
		struct shared s;
		memset(&s, 0, sizeof(s));
		pthread_mutex_init(&s.lock, NULL);
		s.fd = open(p, O_RDONLY);
		T_REQUIRE(s.fd >= 0, "open");
		pthread_t t[THREADS];
		for (int i = 0; i < THREADS; i++)
			T_REQUIRE(pthread_create(&t[i], NULL, read_share, &s) == 0, "thread");
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		close(s.fd);
		int twice = 0, lost = 0;
		for (int i = 0; i < SHARED_BLOCKS; i++) {
			twice += s.seen[i] > 1;
			lost += s.seen[i] == 0;
		}
		T_CHECK(!s.bad && !twice && !lost,
			"round %d: %d reads not a whole block, %d blocks read twice, %d never",
			round, s.bad, twice, lost);
	}
}

#define OWN_THREADS 6
#define OWN_BLOCKS 4
static int own_rounds; /* 3000, SFS_TEST_SCALE scales it */

struct own {
	char *path;
	unsigned seed;
	int bad;
	atomic_int *done;
};

static void *read_own(void *arg)
{
	struct own *o = arg;
	unsigned char b[BLOCK];
	for (int r = 0; r < own_rounds; r++) {
		int fd = open(o->path, O_RDONLY);
		int i = r % OWN_BLOCKS;
		if (fd < 0 || pread(fd, b, BLOCK, (off_t)i * BLOCK) != BLOCK ||
		    !block_ok(b, i, o->seed))
			o->bad++;
		if (fd >= 0 && close(fd) != 0)
			o->bad++;
	}
	atomic_fetch_add(o->done, 1);
	return NULL;
}

/* Until every reader is done: descriptors at ever higher numbers (a dup
 * of a read-only descriptor of a file on the managed file system, which
 * the library marks), each past the last, then closed. */
struct grower {
	char *path;
	atomic_int *done;
	int top, bad;
};

static void *grow_table(void *arg)
{
	struct grower *g = arg;
	int fd = open(g->path, O_RDONLY);
	if (fd < 0) {
		g->bad++;
		return NULL;
	}
	for (int at = 1100; atomic_load(g->done) < OWN_THREADS; at = at * 3 / 2) {
		if (at >= g->top)
			at = 1100;
		int d = fcntl(fd, F_DUPFD, at);
		unsigned char b[BLOCK];
		if (d < at || pread(d, b, BLOCK, 0) != BLOCK || !block_ok(b, 0, 40))
			g->bad++;
		if (d >= 0)
			close(d);
	}
	close(fd);
	return NULL;
}

static void own_files(const char *dir)
{
	struct rlimit rl;
	T_REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	if (rl.rlim_cur < rl.rlim_max && rl.rlim_cur < 8192) {
		rl.rlim_cur = rl.rlim_max < 8192 ? rl.rlim_max : 8192;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	atomic_int done = 0;
	struct own o[OWN_THREADS];
	pthread_t t[OWN_THREADS + 1];
	for (int k = 0; k < OWN_THREADS; k++) {
		char name[32];
		snprintf(name, sizeof(name), "own.%d", k);
		o[k] = (struct own){
			.path = strdup(t_path(dir, name)), .seed = 10 + (unsigned)k, .done = &done};
		make_file(o[k].path, OWN_BLOCKS, o[k].seed);
	}
	struct grower g = {
		.path = strdup(t_path(dir, "grow")), .done = &done, .top = (int)rl.rlim_cur};
	make_file(g.path, 1, 40);
	/* Without room past 1100 the table only grows at start: the readers
	 * still race each other. */
	bool grows = rl.rlim_cur > 2048;
	for (int k = 0; k < OWN_THREADS; k++)
		T_REQUIRE(pthread_create(&t[k], NULL, read_own, &o[k]) == 0, "thread");
	if (grows)
		T_REQUIRE(pthread_create(&t[OWN_THREADS], NULL, grow_table, &g) == 0, "thread");
	for (int k = 0; k < OWN_THREADS + grows; k++)
		pthread_join(t[k], NULL);
	for (int k = 0; k < OWN_THREADS; k++)
		T_CHECK(!o[k].bad,
			"thread %d: %d of %d open, read or close calls failed or read "
			"another file's bytes",
			k, o[k].bad, own_rounds);
	T_CHECK(!g.bad, "%d descriptors past the table went wrong", g.bad);
	for (int k = 0; k < OWN_THREADS; k++)
		free(o[k].path);
	free(g.path);
}

/* The library's SFS_FD_PENDING_OPS (fs/fdtable.h). */
#define SFS_TEST_PENDING_OPS 16
#define HELD_THREADS 4
#define HELD_FILES 150 /* each thread's */
#define HELD_READS (SFS_TEST_PENDING_OPS + 4)
#define HELD_PROCS 6 /* SFS_TEST_SCALE scales them */

struct held {
	const char *dir;
	int thread, bad;
	atomic_int *done;
};

/* The path of thread's file into buf (t_path's buffers are not the
 * threads'). */
static char *held_path(char buf[static 4096], const char *dir, int thread, int file)
{
	snprintf(buf, 4096, "%s/held.%d.%d", dir, thread, file);
	return buf;
}

static void *read_held(void *arg)
{
	struct held *h = arg;
	unsigned char b[BLOCK];
	char path[4096];
	for (int k = 0; k < HELD_FILES; k++) {
		int fd = open(held_path(path, h->dir, h->thread, k), O_RDONLY);
		for (int r = 0; fd >= 0 && r < HELD_READS; r++) {
			if (pread(fd, b, BLOCK, 0) != BLOCK || !block_ok(b, 0, 50))
				h->bad++;
			sched_yield(); /* more reads in flight across a grow */
		}
		if (fd < 0 || close(fd) != 0)
			h->bad++;
	}
	atomic_fetch_add(h->done, 1);
	return NULL;
}

/* The child of held_files: the readers, and descriptors made at ever
 * higher numbers until they are done, so that the table grows (a few
 * times a process: it doubles) while they read. */
static void held_child(const char *dir)
{
	struct rlimit rl;
	T_REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
	rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	atomic_int done = 0;
	struct held h[HELD_THREADS];
	pthread_t t[HELD_THREADS];
	for (int k = 0; k < HELD_THREADS; k++) {
		h[k] = (struct held){.dir = dir, .thread = k, .done = &done};
		T_REQUIRE(pthread_create(&t[k], NULL, read_held, &h[k]) == 0, "thread");
	}
	char path[4096];
	int fd = open(held_path(path, dir, 0, 0), O_RDONLY);
	T_REQUIRE(fd >= 0, "open");
	for (int at = 300; atomic_load(&done) < HELD_THREADS && at < (int)rl.rlim_cur; at *= 2) {
		int d = fcntl(fd, F_DUPFD, at);
		T_CHECK(d >= at, "a descriptor at %d or above", at);
		if (d >= 0)
			close(d);
		usleep(2000);
	}
	close(fd);
	for (int k = 0; k < HELD_THREADS; k++) {
		pthread_join(t[k], NULL);
		T_CHECK(!h[k].bad, "thread %d: %d open, read or close calls failed or read wrong",
			k, h[k].bad);
	}
}

/* held_files' files, block 0 of stream 50 each, written by one process (a
 * process a file would leave as many operation logs in sync and strict
 * modes) started afresh (a forked child of a threaded process may not do
 * this much under ThreadSanitizer). */
static void held_make(const char *dir)
{
	unsigned char b[BLOCK];
	char path[4096];
	t_fill(b, BLOCK, 50, 0);
	memset(b, 0, sizeof(int));
	for (int k = 0; k < HELD_THREADS; k++)
		for (int f = 0; f < HELD_FILES; f++) {
			int fd = open(held_path(path, dir, k, f), O_WRONLY | O_CREAT | O_TRUNC,
				      0644);
			T_CHECK(fd >= 0 && write(fd, b, BLOCK) == BLOCK && close(fd) == 0,
				"write held.%d.%d", k, f);
		}
}

static void held_files(const char *dir)
{
	const char *make[] = {"PENDING_READS_HELD", "make", NULL};
	int wst = t_run_self(dir, make, NULL);
	T_REQUIRE(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "the process that writes the files");
	char *stats = strdup(t_path(dir, "held.stats"));
	int unmanaged = 0, procs = t_scaled(HELD_PROCS, 2);
	for (int p = 0; p < procs; p++) {
		int st = t_run_self_stats(dir, "PENDING_READS_HELD", "1", stats);
		T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			"process %d: the readers failed (%#x)", p, st);
		/* And the descriptor held_child dups, managed at its first. */
		if (t_under_splitfs())
			unmanaged += HELD_THREADS * HELD_FILES + 1 -
				     (int)t_stat_event(stats, "pending_promoted");
	}
	T_CHECK(unmanaged == 0,
		"%d of %d descriptors read %d times were never managed: a count of their "
		"kernel reads was lost",
		unmanaged, procs * HELD_THREADS * HELD_FILES, HELD_READS);
	free(stats);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: pending_reads DIR");
	const char *held = getenv("PENDING_READS_HELD");
	if (held) {
		if (strcmp(held, "make") == 0)
			held_make(argv[1]);
		else
			held_child(argv[1]);
		return t_result();
	}
	own_rounds = t_scaled(3000, 300);
	one_reader(argv[1]);
	reader_then_writer(argv[1]);
	threads_share(argv[1]);
	own_files(argv[1]);
	held_files(argv[1]);
	return t_result();
}
