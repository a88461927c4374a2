/* SPDX-License-Identifier: Apache-2.0 */
/* Description: Figure 3 of the SplitFS paper, what each technique brings,
 * on two write-heavy patterns in 4 KiB operations over MiB of one file:
 *   seq_overwrite          sequential pwrite over an existing file
 *   seq_overwrite_fsync10  the same with fsync after every 10th
 *   append                 write() to a fresh file, no fsync
 *   append_fsync10         write() to a fresh file, fsync after every 10th
 * Each phase starts clean: the file's dirty data from the phase before is
 * fsynced outside the timing. ns/op (the phase's time / its ops), one JSON
 * line per phase, with what bench/report.py needs to say what bounds it: the
 * phase's memcpy floor (its ops as 4 KiB memcpys to increasing offsets of an
 * anonymous region of the file's size, touched beforehand, right after the
 * phase), its minor page faults and fsyncs per op, its call. bench/workloads/fig3.sh runs it under the configurations
 * that switch techniques on one by one (split path only, + staging with a
 * copy relink, + relink by extent exchange).
 *   fig3 DIR [MiB] [pattern,...]     default 64 MiB, all patterns */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/bench.h"

#define OP 4096

/* The anonymous region of the file's size the floors copy into. */
static char *mem;

/* nops 4 KiB writes, fsync after every `every`th (0: never), timed as
 * name: pwrites over the whole existing file sequentially, or (`appends`)
 * write()s to a fresh file, removed afterwards. Always inlined with a
 * constant `appends`: the timed loop is then what it was as two functions. */
static inline __attribute__((always_inline)) int
timed_writes(const char *path, long nops, int every, const char *name, bool appends)
{
	static char buf[OP];
	if (appends)
		unlink(path);
	int fd = appends ? open(path, O_RDWR | O_CREAT | O_TRUNC, 0644) : open(path, O_RDWR);
	if (fd < 0)
		return bench_fail(path);
	long f = bench_minflt(), syncs = 0;
	double t = bench_now();
	for (long i = 0; i < nops; i++) {
		buf[0] = (char)i;
		if ((appends ? write(fd, buf, OP) : pwrite(fd, buf, OP, (off_t)i * OP)) != OP)
			return bench_fail(appends ? "write" : "pwrite");
		if (every && i % every == every - 1) {
			syncs++;
			if (fsync(fd) != 0)
				return bench_fail("fsync");
		}
	}
	t = bench_now() - t;
	f = bench_minflt() - f;
	struct bench_why w = {bench_floor(mem, buf, OP, NULL, nops, true),
			      "the same pattern as memcpy on anonymous memory",
			      (double)f / (double)nops, (double)syncs / (double)nops,
			      appends ? "write" : "pwrite"};
	bench_result(name, t / (double)nops, "ns/op", &w);
	if (fsync(fd) != 0 || close(fd) != 0)
		return bench_fail("fsync/close");
	if (appends)
		unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fig3 DIR [MiB] [patterns]\n");
		return 2;
	}
	long mib = argc > 2 ? atol(argv[2]) : 64;
	const char *list = argc > 3 ? argv[3] : NULL;
	long nops = mib * (1 << 20) / OP;
	mem = nops < 1 ? NULL : aligned_alloc(OP, (size_t)nops * OP);
	if (!mem)
		return 2;
	memset(mem, 'm', (size_t)nops * OP);
	char path[4096], path2[4096];
	snprintf(path, sizeof(path), "%s/fig3-over.dat", argv[1]);
	snprintf(path2, sizeof(path2), "%s/fig3-append.dat", argv[1]);

	if (bench_want(list, "seq_overwrite") || bench_want(list, "seq_overwrite_fsync10")) {
		/* The existing file: written in 1 MiB pieces, made durable, closed. */
		static char big[1 << 20];
		memset(big, 'o', sizeof(big));
		unlink(path);
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return bench_fail(path);
		for (long done = 0; done < nops * OP;) {
			long n = nops * OP - done < (long)sizeof(big) ? nops * OP - done :
									(long)sizeof(big);
			if (write(fd, big, (size_t)n) != n)
				return bench_fail("write");
			done += n;
		}
		if (fsync(fd) != 0 || close(fd) != 0)
			return bench_fail("fsync/close");
		if (bench_want(list, "seq_overwrite") &&
		    timed_writes(path, nops, 0, "seq_overwrite", false))
			return 1;
		if (bench_want(list, "seq_overwrite_fsync10") &&
		    timed_writes(path, nops, 10, "seq_overwrite_fsync10", false))
			return 1;
		unlink(path);
	}
	if (bench_want(list, "append") && timed_writes(path2, nops, 0, "append", true))
		return 1;
	if (bench_want(list, "append_fsync10") &&
	    timed_writes(path2, nops, 10, "append_fsync10", true))
		return 1;
	return 0;
}
