/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a file opened again for reading keeps its own offset
 * however the library joins its open file to the others. A reader that
 * opens a file the process already has keeps an open file of its own
 * (cheaper than sharing the library's); it is joined to the library's when
 * a writer of the same file needs it (a lease, or a writer opening a file
 * whose open file is read-only). After a fork the parent gives each
 * descriptor back to the kernel at its own offset: a reader taken to be on
 * its own open file while it shares the writer's would move the writer's
 * offset there. Checked on the kernel and under the library alike: every
 * descriptor's offset after the fork, and what each reads or writes next. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define SIZE 65536
#define WRITES 40 /* past the operations before a POSIX-mode lease */

static void make_file(const char *path)
{
	unsigned char buf[SIZE];
	t_fill(buf, SIZE, 1, 0);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0 && write(fd, buf, SIZE) == SIZE && close(fd) == 0, "make %s", path);
}

static void fork_and_wait(void)
{
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0)
		_exit(0);
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
}

static void expect_pos(int fd, off_t want, const char *what)
{
	off_t got = lseek(fd, 0, SEEK_CUR);
	T_CHECK(got == want, "%s: offset %lld, want %lld", what, (long long)got, (long long)want);
}

/* Reads n bytes at fd's offset, which must hold stream seed's bytes from
 * start. */
static void expect_read(int fd, size_t n, unsigned seed, long start, const char *what)
{
	unsigned char got[4096], want[4096];
	T_REQUIRE(n <= sizeof(got), "buffer");
	t_fill(want, n, seed, start);
	T_CHECK(read(fd, got, n) == (ssize_t)n && memcmp(got, want, n) == 0, "%s: read at %ld",
		what, start);
}

/* A writer, then a reader of the same file; the writer's overwrites earn
 * the file a lease, which joins the reader's open file to the library's. */
static void writer_first(const char *path)
{
	make_file(path);
	int w = open(path, O_RDWR);
	int r = open(path, O_RDONLY);
	T_REQUIRE(w >= 0 && r >= 0, "open");
	expect_read(r, 3000, 1, 0, "reader");
	unsigned char buf[512];
	for (int i = 0; i < WRITES; i++) {
		t_fill(buf, sizeof(buf), 2, (long)i * 512);
		T_CHECK(write(w, buf, sizeof(buf)) == (ssize_t)sizeof(buf), "write %d", i);
	}
	fork_and_wait();
	expect_pos(w, WRITES * 512, "writer_first: the writer after the fork");
	expect_pos(r, 3000, "writer_first: the reader after the fork");
	/* The writer's bytes end at 20480: the reader is inside them. */
	expect_read(r, 1000, 2, 3000, "writer_first: the reader after the fork");
	T_CHECK(close(w) == 0 && close(r) == 0, "close");
}

/* Two readers, then a writer: the writer's open takes over the read-only
 * open file for every descriptor of the file, the reader apart too. */
static void readers_first(const char *path)
{
	make_file(path);
	int r1 = open(path, O_RDONLY);
	int r2 = open(path, O_RDONLY);
	T_REQUIRE(r1 >= 0 && r2 >= 0, "open readers");
	expect_read(r1, 1000, 1, 0, "readers_first: r1");
	expect_read(r2, 3000, 1, 0, "readers_first: r2");
	int w = open(path, O_RDWR);
	T_REQUIRE(w >= 0, "open writer");
	unsigned char buf[4096];
	t_fill(buf, 4096, 3, 0);
	T_CHECK(write(w, buf, 4096) == 4096 && write(w, buf, 904) == 904, "write");
	fork_and_wait();
	expect_pos(r1, 1000, "readers_first: r1 after the fork");
	expect_pos(r2, 3000, "readers_first: r2 after the fork");
	expect_pos(w, 5000, "readers_first: the writer after the fork");
	expect_read(r2, 1000, 3, 3000, "readers_first: r2 after the fork");
	T_CHECK(close(w) == 0 && close(r1) == 0 && close(r2) == 0, "close");
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: reopen_apart DIR");
	writer_first(t_path(argv[1], "a"));
	readers_first(t_path(argv[1], "b"));
	return t_result();
}
