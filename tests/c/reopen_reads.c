/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a file the process knows, opened again and again to be
 * read (a server of small files, FxMark's DOCL). The process writes the
 * file and reads it often enough to lease it (the library then has an
 * inode of it), closes it, then opens it read-only N times, reads 4 KiB
 * at a different offset each time, checks them, and closes it; then it
 * writes the file once more through a new descriptor and reads that back
 * through one opened before the write and through a new one. The strace
 * suite counts the calls of the reopens: no more opens, closes and stats
 * than natively (the inode, unleased since its close, would read through
 * the kernel anyway).
 *   reopen_reads DIR [N]    default 200 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "helpers.h"

#define BLOCK 4096L
#define BLOCKS 64L
#define SIZE (BLOCK * BLOCKS)

static void check_block(int fd, long b, unsigned seed, const char *what)
{
	unsigned char got[BLOCK], want[BLOCK];
	t_fill(want, BLOCK, seed, b * BLOCK);
	T_CHECK(pread(fd, got, BLOCK, b * BLOCK) == BLOCK && memcmp(got, want, BLOCK) == 0,
		"%s: block %ld", what, b);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: reopen_reads DIR [N]");
	int n = argc > 2 ? atoi(argv[2]) : 200;
	const char *path = t_path(argv[1], "served");
	unsigned char *data = malloc(SIZE);
	T_REQUIRE(data, "malloc");
	t_fill(data, SIZE, 7, 0);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);
	T_CHECK(write(fd, data, SIZE) == SIZE, "write");
	for (long b = 0; b < BLOCKS; b++) /* enough operations for a lease */
		check_block(fd, b, 7, "read while open");
	T_CHECK(close(fd) == 0, "close");

	for (int i = 0; i < n; i++) {
		fd = open(path, O_RDONLY);
		T_REQUIRE(fd >= 0, "reopen %d", i);
		check_block(fd, i % BLOCKS, 7, "reopened");
		T_CHECK(close(fd) == 0, "close %d", i);
	}

	/* A reader opened before a write sees it, and so does one after. */
	int reader = open(path, O_RDONLY);
	T_REQUIRE(reader >= 0, "open the reader");
	fd = open(path, O_WRONLY);
	T_REQUIRE(fd >= 0, "open the writer");
	t_fill(data, SIZE, 8, 0);
	T_CHECK(pwrite(fd, data, SIZE, 0) == SIZE, "rewrite");
	check_block(reader, 3, 8, "reader opened before the rewrite");
	int late = open(path, O_RDONLY);
	T_REQUIRE(late >= 0, "open a reader after the rewrite");
	for (long b = 0; b < BLOCKS; b++)
		check_block(late, b, 8, "reader opened after the rewrite");
	T_CHECK(close(fd) == 0 && close(reader) == 0 && close(late) == 0, "closes");
	T_CHECK(t_kernel_holds_stream(path, SIZE, 8), "the kernel's file is the rewrite");
	free(data);
	return t_result();
}
