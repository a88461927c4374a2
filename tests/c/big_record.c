/* SPDX-License-Identifier: Apache-2.0 */
/* Description: one write of more than half the operation log (10 MiB with
 * the default 16 MiB SPLITFS_LOG_SIZE) after a small one, as LevelDB's
 * db_test writes a 10 MB value after a key (RecoverDuringMemtableCompaction).
 * In strict mode the big record did not fit in what was left of the log,
 * so its claim checkpointed, which made the file's binding stale; the next
 * try wrote a new binding behind the dead record, the record did not fit
 * again, and so on for ever: the write never returned. The test writes a
 * small record, then the big one as an append and again as an overwrite,
 * and checks the file. It does so in a child, which the parent kills after
 * LIMIT_S: a write that never returns fails the test (an alarm would not
 * do, as the library holds signals back until its call returns).
 *   big_record DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define SMALL 100L
#define BIG (10L << 20)
#define LIMIT_S 120

/* The writes and the checks; the child's exit status. */
static int writer(const char *path)
{
	unsigned char *buf = malloc(BIG), *got = malloc(SMALL + BIG);
	T_REQUIRE(buf && got, "memory");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);

	t_fill(buf, SMALL, 1, 0);
	T_CHECK(write(fd, buf, SMALL) == SMALL, "the small write");
	t_fill(buf, BIG, 2, SMALL);
	T_CHECK(write(fd, buf, BIG) == BIG, "the big append");
	t_fill(buf, BIG, 3, SMALL);
	T_CHECK(pwrite(fd, buf, BIG, SMALL) == BIG, "the big overwrite");

	T_CHECK(pread(fd, got, SMALL + BIG, 0) == SMALL + BIG, "read it back");
	t_fill(buf, SMALL, 1, 0);
	T_CHECK(memcmp(got, buf, SMALL) == 0, "the small write's bytes");
	t_fill(buf, BIG, 3, SMALL);
	T_CHECK(memcmp(got + SMALL, buf, BIG) == 0, "the big overwrite's bytes");
	T_CHECK(close(fd) == 0, "close");

	unsigned char *k;
	long n = t_read_kernel(path, &k);
	T_CHECK(n == SMALL + BIG, "the file's size after close: %ld", n);
	if (n == SMALL + BIG)
		T_CHECK(memcmp(k + SMALL, buf, BIG) == 0, "the file's bytes after close");
	free(k);
	free(buf);
	free(got);
	return t_result();
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: big_record DIR");
	const char *path = t_path(argv[1], "big");
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0)
		_exit(writer(path));
	int status = 0;
	pid_t done = 0;
	for (int tenths = 0; tenths < LIMIT_S * 10 && done == 0; tenths++) {
		done = waitpid(pid, &status, WNOHANG);
		if (done == 0)
			nanosleep(&(struct timespec){0, 100000000}, NULL);
	}
	if (done == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		T_CHECK(false, "the writes did not return within %d s", LIMIT_S);
	} else {
		T_CHECK(done == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
			"the writer's checks (status %#x)", status);
	}
	return t_result();
}
