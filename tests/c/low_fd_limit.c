/* SPDX-License-Identifier: Apache-2.0 */
/* Description: after the program lowers RLIMIT_NOFILE below the numbers
 * the library keeps its descriptors at (512 and up), the descriptors the
 * library makes later stay out of the program's way: with the limit at
 * 128 (bash's `ulimit -n 128`) after a file was opened and written, a
 * forked child that lives on (the library watches it through a
 * descriptor), more writes, another file: the numbers 4-63 are the program's: open returns the
 * lowest free one, as under the kernel, and a dup2 onto each succeeds
 * (the library's new descriptors took the lowest free numbers: bash's
 * own tests redir10 and procsub failed with "dup2 onto descriptor 3,
 * which the library uses: refused (EBUSY)").
 *   low_fd_limit DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define LIMIT 128
#define WRITES 200

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: low_fd_limit DIR");
	/* A file the library serves from before the limit goes down. */
	int fd = open(t_path(argv[1], "f"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create f");
	char block[512];
	memset(block, 'a', sizeof(block));
	for (int i = 0; i < WRITES; i++)
		T_CHECK(write(fd, block, sizeof(block)) == (ssize_t)sizeof(block), "write %d", i);
	struct rlimit rl = {LIMIT, LIMIT};
	T_REQUIRE(setrlimit(RLIMIT_NOFILE, &rl) == 0, "limit %d", LIMIT);
	T_CHECK(fsync(fd) == 0, "fsync");
	pid_t pid = fork(); /* lives until the checks are done */
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		pause();
		_exit(0);
	}
	for (int i = 0; i < WRITES; i++)
		T_CHECK(write(fd, block, sizeof(block)) == (ssize_t)sizeof(block), "write %d", i);

	/* The program has 0, 1, 2 and fd open: open gives the lowest other
	 * number, and every other number below 64 is free for a dup2. */
	T_REQUIRE(fd == 3, "f opened at %d, not 3", fd);
	int lowest = 4;
	int g = open(t_path(argv[1], "g"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_CHECK(g == lowest, "open gave %d, not the lowest free number %d", g, lowest);
	if (g >= 0)
		T_CHECK(write(g, block, 10) == 10 && close(g) == 0, "write and close g");

	int refused = 0;
	for (int n = 4; n < LIMIT / 2; n++) {
		if (dup2(fd, n) != n) {
			refused++;
			continue;
		}
		T_CHECK(close(n) == 0, "close %d", n);
	}
	T_CHECK(refused == 0, "%d dup2 calls onto free numbers below %d refused", refused,
		LIMIT / 2);
	int st;
	T_CHECK(kill(pid, SIGKILL) == 0 && waitpid(pid, &st, 0) == pid, "the child ended");
	T_CHECK(close(fd) == 0, "close f");
	return t_result();
}
