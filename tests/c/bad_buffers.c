/* SPDX-License-Identifier: Apache-2.0 */
/* Description: reads and writes whose buffer faults part way, or at once.
 * The kernel copies up to the fault and returns that count, or EFAULT when
 * nothing could be copied. The library copies through its mappings under
 * a guard (util/guard.h): a fault makes it ask the kernel instead, whose
 * answer the call must return. A child (this program again, t_run_self,
 * with statistics on) reads a 64 KiB file enough times that its reads are
 * copies out of a mapping, then makes each call with a bad buffer and the
 * same call as a raw system call (t_raw4), which the library does not see: the
 * answers (count, errno, file offset, bytes written) must be the same.
 * Each such call may fault at most twice (its copy, then the redo under
 * the locks): a read that had asked the kernel after a fault took the
 * kernel's answer, read under the locks of its range, for a write that
 * overlapped it, and copied again, faulting each time, 256 times over
 * (about 1 ms a read).
 *   bad_buffers DIR */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define BLOCK 4096
#define SIZE (16 * BLOCK)
#define GOOD 100 /* bytes of the buffer before its unmapped page */
#define FAULTING_CALLS 6

/* One call's answer: its result, errno when it failed, and (-1: not
 * asked) the file offset after it. */
struct answer {
	long r;
	int err;
	off_t pos;
};

static struct answer answered(int fd, long r)
{
	struct answer a = {r, r < 0 ? errno : 0, lseek(fd, 0, SEEK_CUR)};
	return a;
}

/* The kernel's answer to system call nr, made by t_raw4. Its offset is
 * the kernel's open file's, which is not the library's while it manages
 * the descriptor: the caller says which offset the call must leave. */
static struct answer raw(int fd, long nr, const void *buf, long n, long off, off_t pos)
{
	long r = t_raw4(nr, fd, (long)buf, n, off);
	struct answer a = {r < 0 ? -1 : r, r < 0 ? (int)-r : 0, pos};
	return a;
}

static void same(const char *what, struct answer lib, struct answer kernel)
{
	T_CHECK(lib.r == kernel.r && lib.err == kernel.err && lib.pos == kernel.pos,
		"%s: the library answered %ld (errno %d, offset %lld), the kernel %ld (errno %d, "
		"offset %lld)",
		what, lib.r, lib.err, (long long)lib.pos, kernel.r, kernel.err,
		(long long)kernel.pos);
}

/* The file's byte at off before the writes. */
static char pattern(long off)
{
	return (char)('a' + off % 23);
}

/* The child: the calls, each through the library then raw. */
static int child(const char *dir)
{
	const char *path = t_path(dir, "bad.dat");
	int fd = open(path, O_RDWR);
	T_REQUIRE(fd >= 0, "open %s", path);
	static char warm[BLOCK];
	/* A fresh descriptor's first reads are the kernel's (fs/fdtable.h),
	 * a chunk's first touches too (map/maptab.h): past both. */
	for (int i = 0; i < 32; i++)
		T_REQUIRE(pread(fd, warm, BLOCK, (off_t)(i % 16) * BLOCK) == BLOCK, "warm read");
	char *two =
		mmap(NULL, 2 * BLOCK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* Its second page inaccessible, not unmapped: a mapping made later
	 * (the library's own) could take the hole. */
	T_REQUIRE(two != MAP_FAILED && mprotect(two + BLOCK, BLOCK, PROT_NONE) == 0,
		  "a buffer with a hole");
	char *half = two + BLOCK - GOOD;
	memset(half, 'w', GOOD);
	static volatile uintptr_t nowhere = 8; /* opaque to the compiler's checks */
	void *none = (void *)nowhere;	       /* nothing there */
	struct iovec v = {half, BLOCK};

	struct answer lib = answered(fd, pread(fd, half, BLOCK, BLOCK));
	same("pread into a buffer that faults part way", lib,
	     raw(fd, SYS_pread64, half, BLOCK, BLOCK, 0));

	lseek(fd, 2 * BLOCK, SEEK_SET);
	lib = answered(fd, read(fd, half, BLOCK));
	same("read into a buffer that faults part way", lib,
	     raw(fd, SYS_pread64, half, BLOCK, 2 * BLOCK, 2 * BLOCK + lib.r));
	lseek(fd, 0, SEEK_SET);

	lib = answered(fd, preadv(fd, &v, 1, 3 * BLOCK));
	same("preadv into a buffer that faults part way", lib,
	     raw(fd, SYS_preadv, &v, 1, 3 * BLOCK, 0));

	lib = answered(fd, pread(fd, none, BLOCK, 4 * BLOCK));
	same("pread into no memory", lib, raw(fd, SYS_pread64, none, BLOCK, 4 * BLOCK, 0));

	memset(half, 'w', GOOD);
	lib = answered(fd, pwrite(fd, half, BLOCK, 5 * BLOCK));
	same("pwrite from a buffer that faults part way", lib,
	     raw(fd, SYS_pwrite64, half, BLOCK, 6 * BLOCK, 0));
	long wrote = lib.r;

	lib = answered(fd, pwrite(fd, none, BLOCK, 7 * BLOCK));
	same("pwrite from no memory", lib, raw(fd, SYS_pwrite64, none, BLOCK, 7 * BLOCK, 0));

	/* What the two partial writes left: their bytes, then the file's. */
	for (int k = 5; k <= 6; k++) {
		static char got[BLOCK];
		T_REQUIRE(pread(fd, got, BLOCK, (off_t)k * BLOCK) == BLOCK, "read back");
		int bad = -1;
		for (int i = 0; i < BLOCK && bad < 0; i++)
			if (got[i] != (i < wrote ? 'w' : pattern(k * BLOCK + i)))
				bad = i;
		T_CHECK(bad < 0, "block %d after a partial write: byte %d is other", k, bad);
	}
	close(fd);
	return t_result();
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc > 1, "usage: bad_buffers DIR");
	const char *dir = argv[1];
	if (getenv("BAD_BUFFERS_ROLE"))
		return child(dir);
	const char *path = t_path(dir, "bad.dat");
	int w = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	static char data[SIZE];
	for (int i = 0; i < SIZE; i++)
		data[i] = pattern(i);
	T_REQUIRE(w >= 0 && write(w, data, SIZE) == SIZE && fsync(w) == 0 && close(w) == 0,
		  "the file");
	char stats[PATH_MAX];
	snprintf(stats, sizeof(stats), "%s/bad.stats", dir);
	unlink(stats);
	const char *env[] = {
		"BAD_BUFFERS_ROLE", "1", "SPLITFS_STATS", "1", "SPLITFS_STATS_FILE", stats, NULL};
	int st = t_run_self(dir, env, NULL);
	T_REQUIRE(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the child's calls answered as the kernel's (status 0x%x)", st);
	if (t_under_splitfs()) {
		long faults = t_stat_event(stats, "guard_faults");
		printf("guard faults: %ld for %d calls with a bad buffer\n", faults,
		       FAULTING_CALLS);
		T_CHECK(faults <= 2 * FAULTING_CALLS,
			"%ld faults for %d calls with a bad buffer: some call copied again and "
			"again",
			faults, FAULTING_CALLS);
		const char *mode = getenv("SPLITFS_MODE");
		if ((!mode || strcmp(mode, "posix") == 0) && !t_on_dax(path))
			T_CHECK(faults > 0, "no copy faulted: the reads were not the library's");
	}
	return t_result();
}
