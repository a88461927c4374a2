/* SPDX-License-Identifier: Apache-2.0 */
/* Description: other processes use a file this one writes, and see and
 * change exactly what they would on the kernel (issue 13, items 5 and 9):
 *  - a program without the library appends between two of this process's
 *    unsynced appends: every byte of both survives, in order;
 *  - it truncates the file between writes: the truncation stays, and this
 *    process's next writes land where the kernel would put them;
 *  - it shrinks or grows a file this process reads: reads, lseek(SEEK_END)
 *    and fstat follow the file's new size at once;
 *  - a program without the library, and one under it, read the file while
 *    this process has appended to it without fsync: they see every byte;
 *  - an flock(2) lock this process took is gone when it closes the file.
 * The other program is a peer process (helpers.h) forked before anything
 * is opened; its raw system calls stand for a program without SplitFS. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

#define REC 8 /* "A012345\n" */

static void rec(char *out, char tag, int i)
{
	snprintf(out, REC + 1, "%c%06d\n", tag, i);
}

/* Appends records [from, to) with write(). */
static void append(int fd, char tag, int from, int to)
{
	for (int i = from; i < to; i++) {
		char r[REC + 1];
		rec(r, tag, i);
		T_CHECK(write(fd, r, REC) == REC, "append %c%d", tag, i);
	}
}

/* A foreign append between two runs of unsynced appends. */
static void foreign_append(const char *dir)
{
	char *p = t_path(dir, "fa.log");
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open");
	append(fd, 'A', 0, 50);
	T_CHECK(t_peer(T_PEER_RAW_APPEND, p, 0, 0, "EEEEEE\n", 7, NULL, 0) == 7, "foreign append");
	append(fd, 'A', 50, 100);
	T_CHECK(close(fd) == 0, "close");
	unsigned char *got;
	long n = t_read_kernel(p, &got);
	T_CHECK(n == 100 * REC + 7, "size %ld, want %d", n, 100 * REC + 7);
	char want[100 * REC + 8];
	for (int i = 0; i < 50; i++)
		rec(want + i * REC, 'A', i);
	memcpy(want + 50 * REC, "EEEEEE\n", 7);
	for (int i = 50; i < 100; i++)
		rec(want + 7 + i * REC, 'A', i);
	T_CHECK(n == 100 * REC + 7 && memcmp(got, want, (size_t)n) == 0,
		"content: the foreign append was overwritten or misplaced");
	free(got);
}

/* A foreign truncation between writes at this process's own offset. */
static void foreign_truncate(const char *dir)
{
	char *p = t_path(dir, "ft.dat");
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open");
	append(fd, 'B', 0, 40);
	T_CHECK(t_peer(T_PEER_RAW_TRUNCATE, p, 20, 0, NULL, 0, NULL, 0) == 0, "foreign truncate");
	append(fd, 'B', 40, 45); /* at offset 40 * REC: a hole from 20 */
	T_CHECK(close(fd) == 0, "close");
	unsigned char *got;
	long n = t_read_kernel(p, &got);
	T_CHECK(n == 45 * REC, "size %ld, want %d", n, 45 * REC);
	char want[45 * REC + 1];
	memset(want, 0, sizeof(want));
	for (int i = 0; i < 45; i++)
		rec(want + i * REC, 'B', i);
	memset(want + 20, 0, 40 * REC - 20); /* truncated away, then a hole */
	T_CHECK(n == 45 * REC && memcmp(got, want, (size_t)n) == 0,
		"content: the truncation was undone or the writes misplaced");
	free(got);
}

/* A file this process reads, shrunk and grown by another. */
static void foreign_resize(const char *dir)
{
	char *p = t_path(dir, "fr.dat");
	unsigned char buf[65536], got[65536];
	t_fill(buf, sizeof(buf), 5, 0);
	int w = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(w >= 0 && write(w, buf, sizeof(buf)) == (ssize_t)sizeof(buf) && close(w) == 0,
		  "make the file");
	int fd = open(p, O_RDONLY);
	T_REQUIRE(fd >= 0, "open");
	for (int i = 0; i < 8; i++) /* hot: the library serves it */
		T_CHECK(pread(fd, got, 4096, i * 4096) == 4096, "read %d", i);
	T_CHECK(t_peer(T_PEER_RAW_TRUNCATE, p, 1000, 0, NULL, 0, NULL, 0) == 0, "foreign shrink");
	T_CHECK(lseek(fd, 0, SEEK_END) == 1000, "SEEK_END after the shrink");
	T_CHECK(pread(fd, got, 100, 2000) == 0, "read past the new end (in its last page)");
	T_CHECK(pread(fd, got, 4096, 500) == 500 && memcmp(got, buf + 500, 500) == 0,
		"read across the new end");
	struct stat st;
	T_CHECK(fstat(fd, &st) == 0 && st.st_size == 1000, "fstat after the shrink");
	T_CHECK(t_peer(T_PEER_RAW_APPEND, p, 0, 0, buf, 3000, NULL, 0) == 3000, "foreign append");
	for (int i = 0; i < 8; i++)
		T_CHECK(pread(fd, got, 3000, 1000) == 3000 && memcmp(got, buf, 3000) == 0,
			"read what the other process appended (%d)", i);
	T_CHECK(lseek(fd, 0, SEEK_END) == 4000, "SEEK_END after the append");
	close(fd);
}

/* Readers in other processes see unsynced appends at once. */
static void readers_see(const char *dir)
{
	char *p = t_path(dir, "rs.log");
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open");
	append(fd, 'C', 0, 200);
	char want[200 * REC];
	for (int i = 0; i < 200; i++)
		rec(want + i * REC, 'C', i);
	char got[200 * REC];
	long n = t_peer(T_PEER_RAW_READ, p, sizeof(got), 0, NULL, 0, got, sizeof(got));
	T_CHECK(n == (long)sizeof(want) && memcmp(got, want, sizeof(want)) == 0,
		"a reader without the library read %ld of %zu bytes", n, sizeof(want));
	char more[REC + 1];
	rec(more, 'D', 0);
	T_CHECK(write(fd, more, REC) == REC, "append after the reader");
	n = t_peer(T_PEER_LIBC_READ, p, REC, 200 * REC, NULL, 0, got, sizeof(got));
	T_CHECK(n == REC && memcmp(got, more, REC) == 0,
		"a reader under the library read %ld of %d bytes", n, REC);
	T_CHECK(close(fd) == 0, "close");
}

/* An flock lock is the open file's: gone with the application's close. */
static void flock_released(const char *dir)
{
	char *p = t_path(dir, "fl.dat");
	unsigned char buf[4096];
	t_fill(buf, sizeof(buf), 7, 0);
	/* Made by the peer: this process opens it once, read-only. */
	T_REQUIRE(t_peer(T_PEER_RAW_APPEND, p, 0, 0, buf, sizeof(buf), NULL, 0) == sizeof(buf),
		  "make the file");
	int fd = open(p, O_RDONLY);
	T_REQUIRE(fd >= 0, "open");
	for (int i = 0; i < 8; i++)
		T_CHECK(pread(fd, buf, 100, 0) == 100, "read");
	T_CHECK(flock(fd, LOCK_EX) == 0, "flock");
	T_CHECK(t_peer(T_PEER_RAW_FLOCK, p, 0, 0, NULL, 0, NULL, 0) == -EWOULDBLOCK,
		"the lock holds while the file is open");
	T_CHECK(close(fd) == 0, "close");
	T_CHECK(t_peer(T_PEER_RAW_FLOCK, p, 0, 0, NULL, 0, NULL, 0) == 0,
		"the lock outlived the close");
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	t_peer_start();
	foreign_append(dir);
	foreign_truncate(dir);
	foreign_resize(dir);
	readers_see(dir);
	flock_released(dir);
	t_peer_stop();
	return t_result();
}
