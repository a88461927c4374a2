/* SPDX-License-Identifier: Apache-2.0 */
/* Description: write amplification of small durable overwrites (the VSM
 * paper's Figure 7): for each size of 1 KiB .. 1 MiB, OPS overwrites at
 * random size-aligned offsets of a FILE_MiB file written beforehand, each
 * followed by fsync. Device bytes come from the block device's stat file
 * (/sys/block/<dev>/stat, field 7: 512-byte sectors written), read before
 * and after each size:
 *   wamp_<size>     device bytes / bytes the program wrote (lower is better)
 *   latency_<size>_ns   ns per overwrite+fsync
 * The page cache holds no dirty data when a size starts: the file is
 * written and fsynced first, and before each size the file system is
 * frozen and thawed (FIFREEZE/FITHAW: everything dirty, the log and the
 * metadata it covers, goes to the device), or synced if it cannot be
 * frozen. After a size, syncfs (the fsyncs already forced the log); the
 * metadata XFS writes back in place later is not counted.
 *   wamp DIR STATFILE [FILE_MiB] [OPS]     default 64 MiB, 1000 ops a size */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/bench.h"

static uint64_t rng = 0x2545f4914f6cdd1du;

/* Sectors written so far: the 7th field of /sys/block/<dev>/stat. */
static long long sectors_written(const char *statfile)
{
	char buf[512];
	int fd = open(statfile, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	long long f[7];
	if (sscanf(buf, "%lld %lld %lld %lld %lld %lld %lld", &f[0], &f[1], &f[2], &f[3], &f[4],
		   &f[5], &f[6]) != 7)
		return -1;
	return f[6];
}

/* Nothing dirty left: freeze + thaw, else syncfs. Returns 1 if frozen. */
static int quiesce(int dirfd)
{
	if (ioctl(dirfd, FIFREEZE, 0) == 0) {
		if (ioctl(dirfd, FITHAW, 0) != 0) {
			perror("FITHAW");
			exit(1);
		}
		return 1;
	}
	syncfs(dirfd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: wamp DIR STATFILE [FILE_MiB] [OPS]\n");
		return 2;
	}
	const char *statfile = argv[2];
	long mib = argc > 3 ? atol(argv[3]) : 64;
	long ops = argc > 4 ? atol(argv[4]) : 1000;
	static const struct {
		const char *name;
		long size;
	} sizes[] = {{"1k", 1 << 10},	{"4k", 4 << 10},     {"16k", 16 << 10},
		     {"64k", 64 << 10}, {"256k", 256 << 10}, {"1m", 1 << 20}};
	long file = mib << 20;
	if (file < (1 << 20) || ops < 1 || sectors_written(statfile) < 0) {
		fprintf(stderr, "wamp: bad size/ops or unreadable %s\n", statfile);
		return 2;
	}
	int dirfd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		return bench_fail(argv[1]);
	char path[4096];
	snprintf(path, sizeof(path), "%s/wamp.dat", argv[1]);
	unlink(path);
	static char buf[1 << 20];
	memset(buf, 'w', sizeof(buf));
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return bench_fail(path);
	for (long off = 0; off < file; off += (long)sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return bench_fail("write");
	if (fsync(fd) != 0 || close(fd) != 0)
		return bench_fail("fsync/close");
	fd = open(path, O_RDWR);
	if (fd < 0)
		return bench_fail(path);
	int frozen = 0;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		long size = sizes[s].size, slots = file / size;
		frozen += quiesce(dirfd);
		long long before = sectors_written(statfile);
		double t = bench_now();
		for (long i = 0; i < ops; i++) {
			off_t off = (off_t)(bench_rnd(&rng) % (uint64_t)slots) * size;
			buf[0] = (char)i;
			if (pwrite(fd, buf, (size_t)size, off) != size || fsync(fd) != 0)
				return bench_fail("pwrite/fsync");
		}
		double ns = (bench_now() - t) / (double)ops;
		syncfs(dirfd);
		long long after = sectors_written(statfile);
		double wamp = (double)(after - before) * 512.0 / ((double)ops * (double)size);
		printf("{\"metric\":\"wamp_%s\",\"value\":%.3f,\"unit\":\"x\",\"better\":\"lower\"}\n",
		       sizes[s].name, wamp);
		printf("{\"metric\":\"latency_%s_ns\",\"value\":%.0f,\"unit\":\"ns/op\",\"better\":\"lower\"}\n",
		       sizes[s].name, ns);
		fflush(stdout);
	}
	if (!frozen)
		fprintf(stderr, "wamp: could not freeze %s (not root?); synced instead\n", argv[1]);
	close(fd);
	unlink(path);
	close(dirfd);
	return 0;
}
