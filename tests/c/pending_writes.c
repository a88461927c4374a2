/* SPDX-License-Identifier: Apache-2.0 */
/* Description: in POSIX mode a file opened for writing that the process
 * had no inode of is written through the kernel for its first writes and
 * managed after (fs/fdtable.h, pending descriptors); the file holds what
 * the kernel's writes would have made of it, across that change:
 *  - one writer: each block at the offset after the one before;
 *  - an appender, then a second descriptor of the file in the process:
 *    what one writes, the other reads;
 *  - an appender duplicated (dup), writing through both numbers;
 *  - an appender shared with a forked child, both appending at once;
 *  - an appender mapped by the application: the mapping shows each append;
 *  - threads appending through one descriptor at once;
 *  - a file made (O_EXCL) outside the library's root: pending without an
 *    fstat, left to the kernel when its promotion finds where it is.
 * Every block is tagged (writer, index): each is in the file exactly once.
 * A pending descriptor whose open file is shared (dup, fork, mmap) must
 * stay the kernel's: managed, its open file would be leased under the
 * other user's feet and its appends staged where the other cannot see. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define BLOCK 512
#define MAX_TAGS 4096

/* A block of writer w, index i: the tag in its first 8 bytes, then bytes
 * of a stream that depends on both. */
static void block(unsigned char *b, int w, int i)
{
	t_fill(b, BLOCK, (unsigned)(w * 7919 + i), 0);
	memcpy(b, &w, sizeof(w));
	memcpy(b + sizeof(w), &i, sizeof(i));
}

/* Every whole block of the file once: counts each writer's blocks, and
 * the blocks that are not whole or not one of theirs. */
static void census(const char *path, int writers, const int *want, const char *what)
{
	unsigned char *got = NULL;
	long n = t_read_kernel(path, &got);
	T_REQUIRE(n >= 0, "%s: read %s", what, path);
	static unsigned char seen[8][MAX_TAGS];
	memset(seen, 0, sizeof(seen));
	int bad = 0, twice = 0, lost = 0;
	unsigned char b[BLOCK];
	for (long off = 0; off + BLOCK <= n; off += BLOCK) {
		int w, i;
		memcpy(&w, got + off, sizeof(w));
		memcpy(&i, got + off + sizeof(w), sizeof(i));
		if (w < 0 || w >= writers || i < 0 || i >= want[w]) {
			bad++;
			continue;
		}
		block(b, w, i);
		if (memcmp(b, got + off, BLOCK) != 0)
			bad++;
		else if (seen[w][i]++)
			twice++;
	}
	for (int w = 0; w < writers; w++)
		for (int i = 0; i < want[w]; i++)
			lost += !seen[w][i];
	T_CHECK(n % BLOCK == 0 && !bad && !twice && !lost,
		"%s: %ld bytes; %d blocks not a writer's, %d twice, %d missing", what, n, bad,
		twice, lost);
	free(got);
}

static void one_writer(const char *dir)
{
	char *p = t_path(dir, "one");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open");
	unsigned char b[BLOCK];
	int want[1] = {64};
	for (int i = 0; i < want[0]; i++) {
		block(b, 0, i);
		T_CHECK(write(fd, b, BLOCK) == BLOCK, "write %d", i);
		off_t at = lseek(fd, 0, SEEK_CUR);
		T_CHECK(at == (off_t)(i + 1) * BLOCK, "offset %lld after write %d", (long long)at,
			i);
	}
	struct stat st;
	T_CHECK(fstat(fd, &st) == 0 && st.st_size == (off_t)want[0] * BLOCK, "size %lld",
		(long long)st.st_size);
	close(fd);
	census(p, 1, want, "one writer");
}

static void appender_then_reader(const char *dir)
{
	char *p = t_path(dir, "second");
	int a = open(p, O_WRONLY | O_CREAT | O_APPEND | O_EXCL, 0644);
	T_REQUIRE(a >= 0, "open appender");
	unsigned char b[BLOCK], r[BLOCK];
	int want[1] = {64};
	for (int i = 0; i < 8; i++) {
		block(b, 0, i);
		T_CHECK(write(a, b, BLOCK) == BLOCK, "append %d", i);
	}
	int rd = open(p, O_RDWR);
	T_REQUIRE(rd >= 0, "open the second descriptor");
	for (int i = 8; i < want[0]; i++) {
		block(b, 0, i);
		T_CHECK(write(a, b, BLOCK) == BLOCK, "append %d", i);
		T_CHECK(pread(rd, r, BLOCK, (off_t)i * BLOCK) == BLOCK && !memcmp(r, b, BLOCK),
			"the second descriptor reads append %d", i);
		struct stat st;
		T_CHECK(fstat(rd, &st) == 0 && st.st_size == (off_t)(i + 1) * BLOCK,
			"size %lld after append %d", (long long)st.st_size, i);
	}
	close(rd);
	close(a);
	census(p, 1, want, "appender, then a second descriptor");
}

static void duplicated(const char *dir)
{
	char *p = t_path(dir, "dup");
	int a = open(p, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
	T_REQUIRE(a >= 0, "open");
	int d = dup(a);
	T_REQUIRE(d >= 0, "dup");
	unsigned char b[BLOCK];
	int want[2] = {64, 64};
	for (int i = 0; i < 64; i++)
		for (int w = 0; w < 2; w++) {
			block(b, w, i);
			T_CHECK(write(w ? d : a, b, BLOCK) == BLOCK, "append %d.%d", w, i);
		}
	close(d);
	close(a);
	census(p, 2, want, "appender and its dup");
}

/* n blocks of writer w appended through fd. */
static int append_blocks(int fd, int w, int n)
{
	unsigned char b[BLOCK];
	for (int i = 0; i < n; i++) {
		block(b, w, i);
		if (write(fd, b, BLOCK) != BLOCK)
			return -1;
	}
	return 0;
}

static void forked(const char *dir)
{
	char *p = t_path(dir, "fork");
	int a = open(p, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
	T_REQUIRE(a >= 0, "open");
	int want[2] = {400, 400};
	unsigned char b[BLOCK];
	block(b, 0, 0);
	T_CHECK(write(a, b, BLOCK) == BLOCK, "append before the fork");
	pid_t c = fork();
	T_REQUIRE(c >= 0, "fork");
	if (c == 0)
		_exit(append_blocks(a, 1, want[1]) == 0 && close(a) == 0 ? 0 : 1);
	for (int i = 1; i < want[0]; i++) {
		block(b, 0, i);
		T_CHECK(write(a, b, BLOCK) == BLOCK, "append %d", i);
	}
	int st;
	T_CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child");
	close(a);
	census(p, 2, want, "appender shared with a child");
}

static void mapped(const char *dir)
{
	char *p = t_path(dir, "mapped");
	int a = open(p, O_RDWR | O_CREAT | O_APPEND | O_TRUNC, 0644);
	T_REQUIRE(a >= 0, "open");
	unsigned char b[BLOCK];
	block(b, 0, 0);
	T_REQUIRE(write(a, b, BLOCK) == BLOCK, "first append");
	size_t len = 64 * BLOCK;
	unsigned char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, a, 0);
	T_REQUIRE(m != MAP_FAILED, "mmap");
	int want[1] = {64};
	for (int i = 1; i < want[0]; i++) {
		block(b, 0, i);
		T_CHECK(write(a, b, BLOCK) == BLOCK, "append %d", i);
		/* The kernel's page holds the append (a page past the end
		 * would be SIGBUS: only the file's own pages are read). */
		T_CHECK(memcmp(m + (size_t)i * BLOCK, b, BLOCK) == 0,
			"the mapping does not show append %d", i);
	}
	munmap(m, len);
	close(a);
	census(p, 1, want, "appender mapped by the application");
}

/* mkstemp opens O_RDWR|O_CREAT|O_EXCL: /dev/shm is never the root. */
static void outside(void)
{
	char p[] = "/dev/shm/sfs-pending-writes.XXXXXX";
	int fd = mkstemp(p);
	T_REQUIRE(fd >= 0, "mkstemp");
	int want[1] = {64};
	T_CHECK(append_blocks(fd, 0, want[0]) == 0, "appends");
	struct stat st;
	T_CHECK(fstat(fd, &st) == 0 && st.st_size == (off_t)want[0] * BLOCK, "size %lld",
		(long long)st.st_size);
	close(fd);
	census(p, 1, want, "a file made outside the root");
	unlink(p);
}

#define THREADS 4
struct appender {
	int fd, w;
	int rc;
};

static void *append_thread(void *arg)
{
	struct appender *a = arg;
	a->rc = append_blocks(a->fd, a->w, 200);
	return NULL;
}

static void threads(const char *dir)
{
	for (int round = 0; round < 10; round++) {
		char name[32];
		snprintf(name, sizeof(name), "threads.%d", round);
		char *p = t_path(dir, name);
		int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
		T_REQUIRE(fd >= 0, "open");
		pthread_t t[THREADS];
		struct appender a[THREADS];
		int want[THREADS];
		for (int i = 0; i < THREADS; i++) {
			a[i] = (struct appender){fd, i, 0};
			want[i] = 200;
			T_REQUIRE(pthread_create(&t[i], NULL, append_thread, &a[i]) == 0, "thread");
		}
		for (int i = 0; i < THREADS; i++) {
			pthread_join(t[i], NULL);
			T_CHECK(a[i].rc == 0, "round %d: thread %d's appends", round, i);
		}
		close(fd);
		census(p, THREADS, want, name);
	}
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: pending_writes DIR");
	one_writer(argv[1]);
	appender_then_reader(argv[1]);
	duplicated(argv[1]);
	forked(argv[1]);
	mapped(argv[1]);
	threads(argv[1]);
	outside();
	return t_result();
}
