/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the paper's Figure 4 IO patterns on one file in 4 KiB ops:
 * append, append with fsync every 10, sequential and random read, sequential
 * and random overwrite. One process = one repetition; prints one JSON line
 * per pattern with ns/op. Run it with and without the library on the same
 * file system (bench/run.sh does, alternating).
 * Each line also carries what bench/report.py needs to say what bounds the
 * pattern: its memcpy floor (right after the pattern, the same ops at the
 * same offsets in the same order as memcpy between the 4 KiB buffer and an
 * anonymous region of the file's size, touched beforehand: reads copy out,
 * overwrites and appends copy in), the minor page faults per op of the
 * timed loop, the fsyncs per op and the data call.
 *   fig4 DIR [MiB] [pattern,...]     default 128 MiB, all patterns */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/bench.h"

#define OP 4096

static void shuffle(long *v, long n, unsigned seed)
{
	srand(seed);
	for (long i = n - 1; i > 0; i--) {
		long j = rand() % (i + 1), t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/* The anonymous region of the file's size the floors copy to and from. */
static char *mem;

/* One pattern's line: ns the timed loop took for ops ops, faults the
 * minor faults it took, fsyncs the fsyncs it made, call its data call,
 * floor the memcpy floor (ns/op). */
static void report(const char *pattern, long ops, double ns, long faults, long fsyncs,
		   const char *call, double memfloor)
{
	struct bench_why w = {memfloor, "the same pattern as memcpy on anonymous memory",
			      (double)faults / (double)ops, (double)fsyncs / (double)ops, call};
	bench_result(pattern, ns / (double)ops, "ns/op", &w);
}

/* One read or overwrite pattern, timed and reported as name: nops 4 KiB
 * preads (with `writes`, pwrites) of fd from buf, at block i, or (seed not
 * 0) at block idx[i] after shuffling idx with seed. Always inlined with
 * constant seed and writes: the timed loop is then what it was written
 * out once per pattern. 0, or 1 on a short read or write. */
static inline __attribute__((always_inline)) int
pattern(const char *name, int fd, char *buf, long *idx, long nops, unsigned seed, bool writes)
{
	if (seed)
		shuffle(idx, nops, seed);
	long f = bench_minflt();
	double t = bench_now();
	for (long i = 0; i < nops; i++) {
		off_t off = (seed ? idx[i] : i) * OP;
		if ((writes ? pwrite(fd, buf, OP, off) : pread(fd, buf, OP, off)) != OP)
			return 1;
	}
	t = bench_now() - t;
	f = bench_minflt() - f;
	double memfloor = bench_floor(mem, buf, OP, seed ? idx : NULL, nops, writes);
	report(name, nops, t, f, 0, writes ? "pwrite" : "pread", memfloor);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fig4 DIR [MiB] [patterns]\n");
		return 2;
	}
	long mib = argc > 2 ? atol(argv[2]) : 128;
	const char *list = argc > 3 ? argv[3] : NULL;
	long nops = mib * (1 << 20) / OP;
	char path[4096], path2[4096];
	snprintf(path, sizeof(path), "%s/fig4.dat", argv[1]);
	snprintf(path2, sizeof(path2), "%s/fig4-fsync.dat", argv[1]);
	static char buf[OP];
	memset(buf, 'a', sizeof(buf));
	long *idx = malloc(sizeof(long) * (size_t)nops);
	mem = aligned_alloc(OP, (size_t)nops * OP);
	if (nops < 4 || !idx || !mem)
		return 2;
	for (long i = 0; i < nops; i++)
		idx[i] = i;
	memset(mem, 'm', (size_t)nops * OP);

	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	long f = bench_minflt();
	double t = bench_now();
	for (long i = 0; i < nops; i++)
		if (write(fd, buf, OP) != OP)
			return 1;
	t = bench_now() - t;
	f = bench_minflt() - f;
	if (bench_want(list, "append"))
		report("append", nops, t, f, 0, "write",
		       bench_floor(mem, buf, OP, NULL, nops, true));
	fsync(fd);

	if (bench_want(list, "append_fsync10")) {
		unlink(path2);
		int fd2 = open(path2, O_RDWR | O_CREAT | O_TRUNC, 0644);
		long n2 = nops / 4, syncs = 0; /* fsync-bound: a quarter of the ops */
		f = bench_minflt();
		t = bench_now();
		for (long i = 0; i < n2; i++) {
			if (write(fd2, buf, OP) != OP)
				return 1;
			if (i % 10 == 9) {
				fsync(fd2);
				syncs++;
			}
		}
		t = bench_now() - t;
		f = bench_minflt() - f;
		report("append_fsync10", n2, t, f, syncs, "write",
		       bench_floor(mem, buf, OP, NULL, n2, true));
		close(fd2);
		unlink(path2);
	}
	if (bench_want(list, "seq_read") && pattern("seq_read", fd, buf, idx, nops, 0, false))
		return 1;
	if (bench_want(list, "rand_read") && pattern("rand_read", fd, buf, idx, nops, 1, false))
		return 1;
	if (bench_want(list, "seq_overwrite") &&
	    pattern("seq_overwrite", fd, buf, idx, nops, 0, true))
		return 1;
	if (bench_want(list, "rand_overwrite") &&
	    pattern("rand_overwrite", fd, buf, idx, nops, 2, true))
		return 1;
	close(fd);
	unlink(path);
	free(mem);
	free(idx);
	return 0;
}
