/* SPDX-License-Identifier: Apache-2.0 */
/* Description: 4 KiB overwrites of clean, cached pages, the case where a
 * store through a mapping pays a write fault the kernel's pwrite does not
 * (src/fs/ahead.c). The file is made by a child without the library, in
 * 256 KiB writes ("large": the page cache holds it in large folios, as
 * after the library's own relinks or readahead) or in 4 KiB writes
 * ("small": 4 KiB folios), and fsynced. Then:
 *   seq_LAYOUT   read the whole file in 4 KiB preads (a reader maps its
 *                pages read-only), then overwrite it in order;
 *   rand_LAYOUT  fsync (writeback write-protects the pages again), then
 *                overwrite a quarter of its blocks in random order.
 * ns/op with the memcpy floor of the same pattern and faults per op.
 *   cleanpages DIR [MiB]    default 64 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/bench.h"

#define OP 4096

static char *mem; /* the floors' anonymous memory, the file's size */

/* The file: nops blocks of 'c' written in pieces of `piece` bytes and
 * fsynced, by this program run again without the library (an empty
 * environment): the library would stage the writes and relink them in
 * large pieces. 0 or 1. */
static int make_file(const char *path, long nops, size_t piece)
{
	char blocks[32], size[32];
	snprintf(blocks, sizeof(blocks), "%ld", nops);
	snprintf(size, sizeof(size), "%zu", piece);
	char *args[] = {"cleanpages", "--make", (char *)path, blocks, size, NULL};
	char *env[] = {NULL};
	pid_t pid;
	int status;
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, env) != 0 ||
	    waitpid(pid, &status, 0) != pid)
		return 1;
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* cleanpages --make PATH BLOCKS PIECE: make_file's child. */
static int make_child(char **argv)
{
	long nops = atol(argv[3]);
	size_t piece = (size_t)atol(argv[4]);
	char *buf = aligned_alloc(OP, piece);
	int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (!buf || fd < 0)
		return 1;
	memset(buf, 'c', piece);
	for (long off = 0; off < nops * OP; off += (long)piece)
		if (pwrite(fd, buf, piece, off) != (ssize_t)piece)
			return 1;
	return fsync(fd) != 0 || close(fd) != 0;
}

static int run(const char *dir, const char *layout, size_t piece, char *buf, long *idx, long nops)
{
	char path[4096], name[64];
	snprintf(path, sizeof(path), "%s/cleanpages.dat", dir);
	if (make_file(path, nops, piece))
		return bench_fail("make the file");
	int fd = open(path, O_RDWR);
	if (fd < 0)
		return bench_fail("open");
	for (long i = 0; i < nops; i++)
		if (pread(fd, buf, OP, i * OP) != OP)
			return bench_fail("pread");

	long f = bench_minflt();
	double t = bench_now();
	for (long i = 0; i < nops; i++)
		if (pwrite(fd, buf, OP, i * OP) != OP)
			return bench_fail("pwrite");
	t = bench_now() - t;
	f = bench_minflt() - f;
	struct bench_why w = {bench_floor(mem, buf, OP, NULL, nops, true),
			      "the same pattern as memcpy on anonymous memory",
			      (double)f / (double)nops, 0, "pwrite"};
	snprintf(name, sizeof(name), "seq_%s", layout);
	bench_result(name, t / (double)nops, "ns/op", &w);

	if (fsync(fd) != 0)
		return bench_fail("fsync");
	long n = nops / 4;
	f = bench_minflt();
	t = bench_now();
	for (long i = 0; i < n; i++)
		if (pwrite(fd, buf, OP, idx[i] * OP) != OP)
			return bench_fail("pwrite");
	t = bench_now() - t;
	f = bench_minflt() - f;
	w.floor_ns = bench_floor(mem, buf, OP, idx, n, true);
	w.faults = (double)f / (double)n;
	snprintf(name, sizeof(name), "rand_%s", layout);
	bench_result(name, t / (double)n, "ns/op", &w);
	close(fd);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--make") == 0)
		return make_child(argv);
	if (argc < 2) {
		fprintf(stderr, "usage: cleanpages DIR [MiB]\n");
		return 2;
	}
	long nops = (argc > 2 ? atol(argv[2]) : 64) * (1 << 20) / OP;
	char *buf = aligned_alloc(OP, 256 << 10);
	long *idx = malloc(sizeof(long) * (size_t)nops);
	mem = aligned_alloc(OP, (size_t)nops * OP);
	if (nops < 64 || !buf || !idx || !mem)
		return 2;
	memset(buf, 'c', 256 << 10);
	memset(mem, 'm', (size_t)nops * OP);
	uint64_t seed = 7;
	for (long i = 0; i < nops; i++)
		idx[i] = i;
	for (long i = nops - 1; i > 0; i--) {
		long j = (long)(bench_rnd(&seed) % (uint64_t)(i + 1)), v = idx[i];
		idx[i] = idx[j];
		idx[j] = v;
	}
	if (run(argv[1], "large", 256 << 10, buf, idx, nops) ||
	    run(argv[1], "small", OP, buf, idx, nops))
		return 1;
	free(mem);
	free(idx);
	free(buf);
	return 0;
}
