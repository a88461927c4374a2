/* SPDX-License-Identifier: Apache-2.0 */
/* Description: what the machine's primitives cost, on the file system under
 * test, so a results table can say why its ratios are what they are (the
 * lab's emulated CPU slows some of them far more than others). One JSON
 * object on stdout, medians of batches, ns unless named otherwise:
 *   syscall_ns          getppid()
 *   memcpy_4k_ns        glibc memcpy of 4 KiB, hot
 *   crc32c_4k_ns        CRC32C of 4 KiB as the operation log computes it
 *                       (src/util/crc32c.c, SSE4.2 when the CPU has it)
 *   pmem_copy_4k_ns     libpmem2's memcpy of 4 KiB into a mapping of a file
 *                       there, then its drain (one fence): what a durable
 *                       store costs on DAX (MAP_SYNC, cache-line granularity;
 *                       elsewhere libpmem2 maps with page granularity and
 *                       its copy ends in an msync)
 *   pwrite_4k_ns, pread_4k_ns   the kernel's 4 KiB overwrite and read
 *   first_store_ns      first store to each 4 KiB page of a fresh file
 *                       mapping (MAP_SHARED), per page: a write fault each,
 *                       or one per 2 MiB where the kernel maps 2 MiB at once
 *   faults_per_2m       page faults those stores took per 2 MiB
 *   for a file grown by 1 MiB fsynced writes (as a log or database grows),
 *   and aligned_* for one with a 2 MiB extent size hint (XFS: aligned
 *   extents, which DAX maps 2 MiB at a time)
 *   primitives DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <libpmem2.h>
#include <stdbool.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../../src/util/crc32c.h"
#include "lib/bench.h"

#define KIB4 4096
#define MIB ((size_t)1 << 20)
#define FILE_MIB 32 /* the fault files; the copy file is 8 MiB */
#define BATCH 64
#define BATCHES 101

static long minflt(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return r.ru_minflt;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* The median over BATCHES batches of the per-operation time of op(i). */
static double per_op(void (*op)(long i))
{
	double t[BATCHES];
	long i = 0;
	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = bench_ns();
		for (int k = 0; k < BATCH; k++)
			op(i++);
		t[b] = (double)(bench_ns() - t0) / BATCH;
	}
	qsort(t, BATCHES, sizeof(t[0]), bench_cmp_double);
	return t[BATCHES / 2];
}

static char src[KIB4] __attribute__((aligned(64)));
static char dst[KIB4] __attribute__((aligned(64)));
static void *(*volatile copy)(void *, const void *, size_t) = memcpy;
static volatile uint32_t sink;
static int fd;
static char *pm;
static pmem2_memcpy_fn pcopy;
static pmem2_drain_fn pdrain;
#define COPY_PAGES (8 * MIB / KIB4)

static void op_syscall(long i)
{
	(void)i;
	sink += (uint32_t)getppid();
}

static void op_memcpy(long i)
{
	(void)i;
	copy(dst, src, KIB4);
}

static void op_crc(long i)
{
	(void)i;
	sink += sfs_crc32c_update(~0u, src, KIB4);
}

static void op_pmem(long i)
{
	pcopy(pm + (i % COPY_PAGES) * KIB4, src, KIB4, PMEM2_F_MEM_NODRAIN);
	pdrain();
}

static void op_pwrite(long i)
{
	if (pwrite(fd, src, KIB4, (i % COPY_PAGES) * KIB4) != KIB4)
		die("pwrite");
}

static void op_pread(long i)
{
	if (pread(fd, dst, KIB4, (i % COPY_PAGES) * KIB4) != KIB4)
		die("pread");
}

static int make_file(const char *dir, const char *name, size_t mib, bool aligned)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (f < 0)
		die(path);
	unlink(path);
	if (aligned) {
		struct fsxattr a;
		if (ioctl(f, FS_IOC_FSGETXATTR, &a) == 0) {
			a.fsx_xflags |= FS_XFLAG_EXTSIZE;
			a.fsx_extsize = 2 * MIB;
			ioctl(f, FS_IOC_FSSETXATTR, &a); /* not XFS: no hint, same numbers */
		}
	}
	char *buf = malloc(MIB);
	memset(buf, 'p', MIB);
	for (size_t m = 0; m < mib; m++) {
		if (pwrite(f, buf, MIB, (off_t)(m * MIB)) != (ssize_t)MIB)
			die("pwrite");
		if (fsync(f) != 0)
			die("fsync");
	}
	free(buf);
	return f;
}

/* Stores to every page of a fresh mapping of f: faults per 2 MiB, ns a page. */
static void store_faults(int f, double *per_2m, double *ns_page)
{
	size_t len = FILE_MIB * MIB;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	if (m == MAP_FAILED)
		die("mmap");
	long f0 = minflt();
	uint64_t t0 = bench_ns();
	for (size_t off = 0; off < len; off += KIB4)
		m[off] = 1;
	*ns_page = (double)(bench_ns() - t0) / (double)(len / KIB4);
	*per_2m = (double)(minflt() - f0) / (double)(len / (2 * MIB));
	munmap(m, len);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: primitives DIR\n");
		return 2;
	}
	memset(src, 's', sizeof(src));
	double sys = per_op(op_syscall), mc = per_op(op_memcpy), crc = per_op(op_crc);

	fd = make_file(argv[1], "primitives.copy", 8, false);
	struct pmem2_source *s;
	struct pmem2_config *c;
	struct pmem2_map *map;
	if (pmem2_source_from_fd(&s, fd) || pmem2_config_new(&c))
		die("pmem2 source/config");
	/* Cache-line granularity where the file is DAX, else page (no MAP_SYNC). */
	if (pmem2_config_set_required_store_granularity(c, PMEM2_GRANULARITY_CACHE_LINE) ||
	    pmem2_map_new(&map, c, s)) {
		if (pmem2_config_set_required_store_granularity(c, PMEM2_GRANULARITY_PAGE) ||
		    pmem2_map_new(&map, c, s)) {
			fprintf(stderr, "primitives: pmem2_map_new: %s\n", pmem2_errormsg());
			return 1;
		}
	}
	pm = pmem2_map_get_address(map);
	pcopy = pmem2_get_memcpy_fn(map);
	pdrain = pmem2_get_drain_fn(map);
	for (size_t off = 0; off < 8 * MIB; off += KIB4) /* faults out of the timing */
		pm[off] = 0;
	double pc = per_op(op_pmem), pw = per_op(op_pwrite), pr = per_op(op_pread);
	pmem2_map_delete(&map);
	pmem2_config_delete(&c);
	pmem2_source_delete(&s);
	close(fd);

	double grown_2m, grown_ns, aligned_2m, aligned_ns;
	int g = make_file(argv[1], "primitives.grown", FILE_MIB, false);
	store_faults(g, &grown_2m, &grown_ns);
	close(g);
	int h = make_file(argv[1], "primitives.aligned", FILE_MIB, true);
	store_faults(h, &aligned_2m, &aligned_ns);
	close(h);
	printf("{\"syscall_ns\": %.0f, \"memcpy_4k_ns\": %.0f, \"crc32c_4k_ns\": %.0f, "
	       "\"pmem_copy_4k_ns\": %.0f, \"pwrite_4k_ns\": %.0f, \"pread_4k_ns\": %.0f, "
	       "\"first_store_ns\": %.0f, \"faults_per_2m\": %.1f, "
	       "\"aligned_first_store_ns\": %.0f, \"aligned_faults_per_2m\": %.1f}\n",
	       sys, mc, crc, pc, pw, pr, grown_ns, grown_2m, aligned_ns, aligned_2m);
	return 0;
}
