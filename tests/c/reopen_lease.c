/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a closed file opened again at once gets its lease. The
 * library keeps a closed file's inode for a moment, its descriptor open;
 * one still open for writing is evicted by the background thread shortly
 * after the close. An open of the same file racing that eviction makes a
 * new inode while the old descriptor is not yet closed, and the kernel
 * refuses a lease while the file has a second open file: the file then
 * went the kernel's way, and in strict mode its O_APPEND writes were
 * durable but not atomic (seen as a workload error in a power-cut run).
 * Under the library the test runs itself again with close(2) slowed in
 * the background thread (tests/shim/slowclose.c), which holds that window
 * open, and checks the library's counts: every open file leased, no lease
 * refused. On the kernel it checks the file's contents only. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

/* The background thread evicts 50 ms after a close: about twenty times in a
 * run, each time most likely between a close and the next open. */
static int nrounds; /* 2000, SFS_TEST_SCALE scales it */
#define WRITES 20   /* more than the library's ops before a POSIX-mode lease */
#define RECLEN 64

static void rounds(const char *path)
{
	unsigned char buf[RECLEN];
	for (int r = 0; r < nrounds; r++) {
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
		T_REQUIRE(fd >= 0, "open round %d", r);
		for (int w = 0; w < WRITES; w++) {
			t_fill(buf, RECLEN, 7, (long)(r * WRITES + w) * RECLEN);
			T_CHECK(write(fd, buf, RECLEN) == RECLEN, "write %d.%d", r, w);
		}
		T_CHECK(close(fd) == 0, "close round %d", r);
		usleep(500); /* closed most of the time */
	}
}

static void check_contents(const char *path)
{
	unsigned char *got = NULL;
	long n = t_read_kernel(path, &got);
	long want = (long)nrounds * WRITES * RECLEN;
	T_REQUIRE(n == want, "file size %ld, want %ld", n, want);
	unsigned char *exp = malloc((size_t)want);
	T_REQUIRE(exp, "malloc");
	t_fill(exp, (size_t)want, 7, 0);
	T_CHECK(memcmp(got, exp, (size_t)want) == 0, "contents differ");
	free(exp);
	free(got);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: reopen_lease DIR");
	const char *dir = argv[1];
	nrounds = t_scaled(2000, 200);
	char *path = t_path(dir, "f");
	if (getenv("REOPEN_LEASE_CHILD")) { /* the run with the slow close */
		rounds(path);
		return t_result();
	}
	unlink(path);
	if (!t_under_splitfs()) {
		rounds(path);
		check_contents(path);
		return t_result();
	}
	char *stats = strdup(t_path(dir, "stats"));
	unlink(stats);
	const char *env[] = {"LD_PRELOAD",
			     t_preload_after("slowclose"),
			     "SPLITFS_STATS",
			     "1",
			     "SPLITFS_STATS_FILE",
			     stats,
			     "REOPEN_LEASE_CHILD",
			     "1",
			     NULL};
	int st = t_run_self(dir, env, NULL);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed (status %#x)", st);
	check_contents(path);
	long leases = t_stat_event(stats, "leases"), refused = t_stat_event(stats, "lease_refused");
	T_CHECK(leases >= nrounds, "%ld leases for %d opens (statistics in %s)", leases, nrounds,
		stats);
	T_CHECK(refused <= 0, "%ld leases refused (statistics in %s)", refused, stats);
	free(stats);
	return t_result();
}
