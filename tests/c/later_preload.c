/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a preload after the library's that wraps readdir and
 * getdents64 (tests/shim/faildir.c fails the first call of each, as
 * coreutils' rm-readdir-fail test's does) sees the program's calls only.
 * The library lists directories of its own (its private folder at start,
 * /proc/thread-self/fd in sync and strict modes, /proc after a fork, the
 * free logs): through libc's DIR streams those listings went to the
 * wrapper (the library's real functions are the next object's) and took
 * the fault meant for the program, whose first readdir then succeeded
 * (rm reported a full directory, not the failed read). The test runs
 * itself again with the shim preloaded, makes the library do its work
 * (writes, an fsync, a fork that writes), then checks that its own first
 * readdir and first getdents64 are the ones that fail. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static void library_work(const char *dir)
{
	char *path = t_path(dir, "data");
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	T_REQUIRE(fd >= 0, "open %s", path);
	unsigned char buf[4096];
	for (int i = 0; i < 32; i++) {
		t_fill(buf, sizeof(buf), 7, (long)i * (long)sizeof(buf));
		T_REQUIRE(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf), "write");
	}
	T_REQUIRE(fsync(fd) == 0, "fsync");
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0)
		_exit(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) ? 0 : 1);
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the forked writer failed");
	T_REQUIRE(pread(fd, buf, 16, 0) == 16, "pread");
	T_REQUIRE(close(fd) == 0, "close");
}

static void first_listings_fail(const char *dir)
{
	DIR *d = opendir(dir);
	T_REQUIRE(d != NULL, "opendir %s", dir);
	errno = 0;
	struct dirent *e = readdir(d);
	T_CHECK(e == NULL && errno == EIO,
		"the program's first readdir: %s, errno %d (the shim's fault went elsewhere)",
		e ? e->d_name : "(end)", errno);
	int entries = 0;
	while ((e = readdir(d)) != NULL)
		entries++;
	T_CHECK(entries >= 3, "%d entries read after the fault", entries);
	closedir(d);

	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	T_REQUIRE(fd >= 0, "open %s", dir);
	char buf[4096];
	errno = 0;
	ssize_t n = getdents64(fd, buf, sizeof(buf));
	T_CHECK(n == -1 && errno == EIO,
		"the program's first getdents64: %zd, errno %d (the shim's fault went elsewhere)",
		n, errno);
	n = getdents64(fd, buf, sizeof(buf));
	T_CHECK(n > 0, "getdents64 after the fault: %zd", n);
	close(fd);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: later_preload DIR");
	const char *dir = argv[1];
	if (getenv("LATER_PRELOAD_CHILD")) { /* the run with the shim */
		library_work(dir);
		first_listings_fail(dir);
		return t_result();
	}
	const char *env[] = {"LD_PRELOAD", t_preload_after("faildir"), "LATER_PRELOAD_CHILD", "1",
			     NULL};
	int st = t_run_self(dir, env, NULL);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the run with the shim failed (status %#x)",
		st);
	return t_result();
}
