/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a program started under a low RLIMIT_NOFILE can open as
 * many files as under the kernel. In sync and strict modes the library
 * kept its start's descriptor of .splitfs open for good, one of the few
 * numbers such a program has: coreutils' sort under `ulimit -n 6` (three
 * free numbers), which opens inputs until EMFILE and needs two besides
 * its temporary file, died with "open failed" (its test sort-continue).
 * The test runs itself again with only 0-2 open and the limit at 8, and
 * opens files until EMFILE: 5, as under the kernel; then it closes two
 * and opens two more, and reads back what it wrote into each.
 *   low_limit_start DIR */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define LIMIT 8
#define FREE (LIMIT - 3) /* 0, 1 and 2 stay open */

static int open_numbered(const char *dir, int i)
{
	char name[32];
	snprintf(name, sizeof(name), "in.%d", i);
	return open(t_path(dir, name), O_RDONLY | O_CLOEXEC);
}

static void child(const char *dir)
{
	int fds[LIMIT];
	int n = 0;
	for (;;) {
		T_REQUIRE(n < LIMIT, "more than %d files opened under a limit of %d", n, LIMIT);
		int fd = open_numbered(dir, n);
		if (fd < 0) {
			T_CHECK(errno == EMFILE, "open %d: errno %d, not EMFILE", n, errno);
			break;
		}
		fds[n++] = fd;
	}
	T_CHECK(n == FREE, "%d files opened under a limit of %d with 3 open, the kernel opens %d",
		n, LIMIT, FREE);
	for (int i = 0; i < n && i < 2; i++)
		close(fds[i]);
	for (int i = 0; i < n && i < 2; i++) {
		fds[i] = open_numbered(dir, i);
		T_CHECK(fds[i] >= 0, "open %d again after two closes: errno %d", i, errno);
	}
	for (int i = 0; i < n; i++) {
		char buf[16] = {0};
		if (fds[i] < 0)
			continue;
		ssize_t r = pread(fds[i], buf, sizeof(buf) - 1, 0);
		T_CHECK(r > 0 && atoi(buf) == i, "file %d read back as \"%s\" (%zd)", i, buf, r);
	}
}

/* Before the exec: what the shell does for `ulimit -n 8; prog 3<&- ...`. */
static void lower_limit(void)
{
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	struct rlimit rl = {LIMIT, LIMIT};
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		_exit(126);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: low_limit_start DIR");
	const char *dir = argv[1];
	if (getenv("LOW_LIMIT_START_CHILD")) {
		child(dir);
		return t_result();
	}
	for (int i = 0; i < LIMIT; i++) {
		char name[32], text[16];
		snprintf(name, sizeof(name), "in.%d", i);
		int fd = open(t_path(dir, name), O_CREAT | O_TRUNC | O_WRONLY, 0644);
		T_REQUIRE(fd >= 0, "create %s", name);
		int len = snprintf(text, sizeof(text), "%d\n", i);
		T_REQUIRE(write(fd, text, (size_t)len) == len, "write %s", name);
		T_REQUIRE(close(fd) == 0, "close %s", name);
	}
	const char *env[] = {"LOW_LIMIT_START_CHILD", "1", NULL};
	int st = t_run_self(dir, env, lower_limit);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the run under the low limit failed (%#x)",
		st);
	return t_result();
}
