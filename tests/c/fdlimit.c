/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a program that can open N files under the kernel can open
 * N under the library (issue 13, item 11). With RLIMIT_NOFILE at 256, a
 * child opens files (writing and reading each) until EMFILE: it must get
 * as many as the limit leaves after the descriptors it had, less at most a
 * few the library keeps for itself (its directory, its log, its space
 * reservation), and every file must hold what was written to it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define LIMIT 256
#define LIBRARY_KEEPS 4

static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n - 1; /* the directory's own */
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	int p;
	pid_t c = t_fork_pipe(&p);
	if (c == 0) {
		struct rlimit rl = {LIMIT, LIMIT};
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			_exit(3);
		int had = open_fds();
		int n = 0, bad = 0, err = 0;
		static int fds[LIMIT];
		for (; n < LIMIT; n++) {
			char name[32];
			snprintf(name, sizeof(name), "fd.%d", n);
			int fd = open(t_path(dir, name), O_RDWR | O_CREAT | O_TRUNC, 0644);
			if (fd < 0) {
				err = errno;
				break;
			}
			fds[n] = fd;
			char buf[64];
			snprintf(buf, sizeof(buf), "file %d\n", n);
			/* Written and read a few times: the library serves it. */
			for (int k = 0; k < 6; k++)
				if (pwrite(fd, buf, strlen(buf), 0) != (ssize_t)strlen(buf))
					bad++;
		}
		for (int i = 0; i < n; i++) {
			char want[64], got[64];
			snprintf(want, sizeof(want), "file %d\n", i);
			if (pread(fds[i], got, sizeof(got), 0) != (ssize_t)strlen(want) ||
			    memcmp(got, want, strlen(want)) != 0)
				bad++;
		}
		int out[4] = {had, n, err, bad};
		write(p, out, sizeof(out));
		_exit(0);
	}
	int out[4] = {0, 0, 0, 0};
	T_REQUIRE(read(p, out, sizeof(out)) == sizeof(out), "the child's report");
	int st;
	waitpid(c, &st, 0);
	int want = LIMIT - out[0];
	T_CHECK(out[2] == EMFILE, "the open that failed: %s, want EMFILE", strerror(out[2]));
	/* (What was open before counts the library's own descriptors too.) */
	T_CHECK(out[1] >= want - LIBRARY_KEEPS,
		"%d files opened under RLIMIT_NOFILE %d with %d open before: want %d (at most %d "
		"fewer)",
		out[1], LIMIT, out[0], want, LIBRARY_KEEPS);
	T_CHECK(out[3] == 0, "%d reads or writes wrong", out[3]);
	return t_result();
}
