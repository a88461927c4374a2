/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a process may end while the library still learns its DAX
 * primitives. On DAX, POSIX mode's first store to a synced file asks the
 * staging thread to learn them (libpmem2's first map: 40-60 ms in the
 * lab's guest); sync and strict modes map their operation log with
 * libpmem2 and unmap it in the library's destructor. Fresh processes
 * (this program again) each write a file, fsync it, overwrite it (stores)
 * and return from main at once: each must exit 0. Before the fix about one
 * process in a hundred died of SIGSEGV at exit in the lab (logsync's
 * writers): exit ran libpmem2's destructor, which frees its table of maps,
 * while the staging thread was in pmem2_map_new or pmem2_map_delete.
 * Every fourth process (named s.N) runs with tests/shim/slowdlsym.c, which
 * holds the library between libpmem2's dlopen and its first map until
 * exit's _dl_fini has called the library's destructor, and returns from
 * main as soon as libpmem2 is mapped: _dl_fini then runs libpmem2's
 * destructor inside that window. The handler that first fix registers at
 * the load is registered too late there: each such process died of
 * SIGSEGV in pmem2_map_new (in the lab, 15 of 15), until the library's
 * destructor, which _dl_fini calls before libpmem2's, closed libpmem2's use
 * too (util/pmem.h). Seen so without the shim in about one process in 25
 * of tests/c/basic.c run after tests/c/bad_buffers.c.
 * Skipped off DAX and without the library.
 *   exit_learning DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define BLOCK 4096
#define WRITES 20 /* past the write that brings the lease (src/fs/lease.c) */

/* Whether a loaded object is libpmem2 (dl_iterate_phdr lists an object
 * from its mapping on). */
static int is_libpmem2(struct dl_phdr_info *info, size_t size, void *unused)
{
	(void)size;
	(void)unused;
	return info->dlpi_name && strstr(info->dlpi_name, "libpmem2") != NULL;
}

static void child(const char *path)
{
	unsigned char b[BLOCK];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);
	for (int i = 0; i < WRITES; i++) {
		t_fill(b, BLOCK, 9, (long)i * BLOCK);
		T_REQUIRE(pwrite(fd, b, BLOCK, (off_t)i * BLOCK) == BLOCK, "write %d", i);
	}
	T_REQUIRE(fsync(fd) == 0, "fsync");
	for (int i = 0; i < WRITES; i++) { /* stores into the synced file */
		t_fill(b, BLOCK, 10, (long)i * BLOCK);
		T_REQUIRE(pwrite(fd, b, BLOCK, (off_t)i * BLOCK) == BLOCK, "overwrite %d", i);
	}
	/* Returns from main with the descriptor open: exit at once, or (with
	 * the shim) once libpmem2 is loaded (at most 10 s). */
	if (strncmp(strrchr(path, '/') + 1, "s.", 2) == 0)
		for (int i = 0; i < 100000 && !dl_iterate_phdr(is_libpmem2, NULL); i++)
			usleep(100);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: exit_learning DIR");
	const char *role = getenv("EXIT_LEARNING_ROUND");
	if (role) {
		child(t_path(argv[1], role));
		return t_result();
	}
	char *probe = t_path(argv[1], "probe"); /* a directory shows no DAX */
	int pfd = open(probe, O_WRONLY | O_CREAT, 0644);
	T_REQUIRE(pfd >= 0, "create %s", probe);
	close(pfd);
	if (!t_under_splitfs() || !t_on_dax(probe)) {
		printf("not under the library on DAX: nothing to learn\n");
		return T_EXIT_SKIP;
	}
	const char *mode = getenv("SPLITFS_MODE");
	bool posix = !mode || strcmp(mode, "posix") == 0;
	int rounds = t_scaled(60, 20), died = 0, learnt = 0;
	char *stats = strdup(t_path(argv[1], "stats"));
	for (int r = 0; r < rounds; r++) {
		char name[16];
		bool slow = r % 4 == 3;
		snprintf(name, sizeof(name), "%s.%d", slow ? "s" : "f", r);
		unlink(stats);
		const char *env[] = {"EXIT_LEARNING_ROUND",
				     name,
				     "SPLITFS_STATS",
				     "1",
				     "SPLITFS_STATS_FILE",
				     stats,
				     "LD_PRELOAD",
				     slow ? t_preload_after("slowdlsym") : NULL,
				     NULL};
		int st = t_run_self(argv[1], env, NULL);
		bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		died += !ok;
		T_CHECK(ok, "round %d: the process ended with status %#x (%s)", r, st,
			WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exit code");
		learnt += t_stat_event(stats, "dax_unflushed") > 0;
		unsigned char *got = NULL;
		long n = t_read_kernel(t_path(argv[1], name), &got);
		unsigned char want[WRITES * BLOCK];
		t_fill(want, sizeof(want), 10, 0);
		T_CHECK(n == (long)sizeof(want) && memcmp(got, want, sizeof(want)) == 0,
			"round %d: the file holds %ld bytes, not the overwrites", r, n);
		free(got);
	}
	/* POSIX mode: the stores must have asked for the primitives, or this
	 * test tried nothing (the statistics event of a store made before
	 * they are known). */
	if (posix)
		T_CHECK(learnt > 0, "in none of %d processes did a store wait for the primitives",
			rounds);
	printf("%d processes, %d died at exit, %d stored before the primitives were known\n",
	       rounds, died, learnt);
	free(stats);
	return t_result();
}
