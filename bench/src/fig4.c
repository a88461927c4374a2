/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the paper's Figure 4 IO patterns on one file in 4 KiB ops:
 * append, append with fsync every 10, sequential and random read, sequential
 * and random overwrite. One process = one repetition; prints one JSON line
 * per pattern with ns/op. Run it with and without the library on the same
 * file system (bench/run.sh does, alternating).
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

static void report(const char *pattern, long ops, double ns)
{
	printf("{\"pattern\":\"%s\",\"ops\":%ld,\"ns_per_op\":%.1f}\n", pattern, ops,
	       ns / (double)ops);
	fflush(stdout);
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
	double t = bench_now();
	for (long i = 0; i < nops; i++) {
		off_t off = (seed ? idx[i] : i) * OP;
		if ((writes ? pwrite(fd, buf, OP, off) : pread(fd, buf, OP, off)) != OP)
			return 1;
	}
	report(name, nops, bench_now() - t);
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
	for (long i = 0; i < nops; i++)
		idx[i] = i;

	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	double t = bench_now();
	for (long i = 0; i < nops; i++)
		if (write(fd, buf, OP) != OP)
			return 1;
	if (bench_want(list, "append"))
		report("append", nops, bench_now() - t);
	fsync(fd);

	if (bench_want(list, "append_fsync10")) {
		unlink(path2);
		int fd2 = open(path2, O_RDWR | O_CREAT | O_TRUNC, 0644);
		long n2 = nops / 4; /* fsync-bound: a quarter of the ops */
		t = bench_now();
		for (long i = 0; i < n2; i++) {
			if (write(fd2, buf, OP) != OP)
				return 1;
			if (i % 10 == 9)
				fsync(fd2);
		}
		report("append_fsync10", n2, bench_now() - t);
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
	return 0;
}
