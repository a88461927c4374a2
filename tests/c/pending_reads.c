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
 *    by exactly one of them, none twice, none lost. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
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
	for (int round = 0; round < 20; round++) {
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

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: pending_reads DIR");
	one_reader(argv[1]);
	reader_then_writer(argv[1]);
	threads_share(argv[1]);
	return t_result();
}
