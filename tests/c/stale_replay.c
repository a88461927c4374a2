/* SPDX-License-Identifier: Apache-2.0 */
/* Description: recovery never rewrites a file over a later change, nor
 * under a reader (issue 13, items 6 and 7). A writer killed with appends
 * staged, then an append by a program without the library: the append
 * stays. A writer (sync and strict: its log holds records) leaves without
 * exit() (_exit, or SIGKILL); a program without the library then edits
 * the file; then library processes start (each runs recovery) and
 * `splitfs recover` runs: the edit stays. And a writer that left a file
 * intact (a header rewritten at the end, as zlib or a database does) is
 * never rewritten by the recovery of the next library process, whose
 * start does not change the file (mtime) while other processes read it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define NREC 64
#define REC 100

extern char **environ;

static void spawn_wait(char *const argv[])
{
	pid_t pid;
	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return;
	int st;
	waitpid(pid, &st, 0);
}

/* Starts library processes (recovery at their start) and `splitfs recover`. */
static void recoveries(const char *dir)
{
	char *t[] = {"/bin/true", NULL};
	spawn_wait(t);
	spawn_wait(t);
	const char *cli = getenv("SFS_CLI"), *mnt = getenv("SFS_MNT");
	if (cli && mnt) {
		char *r[] = {(char *)cli, "recover", "--root", (char *)mnt, "--quiet", NULL};
		spawn_wait(r);
	}
	(void)dir;
}

static void edit_after_death(const char *dir, bool kill_it)
{
	char *p = t_path(dir, kill_it ? "stale.kill" : "stale.exit");
	pid_t c = t_fork_writer(p, O_RDWR, REC, NREC, 6, kill_it);
	if (kill_it)
		kill(c, SIGKILL);
	int st;
	waitpid(c, &st, 0);
	/* A program without the library edits the file: raw system calls. */
	long fd = syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CLOEXEC);
	T_REQUIRE(fd >= 0, "raw open");
	T_REQUIRE(syscall(SYS_pwrite64, fd, "EDITED", 6, 0) == 6, "raw edit");
	syscall(SYS_close, fd);
	recoveries(dir);
	unsigned char *d;
	long n = t_read_kernel(p, &d);
	unsigned char want[NREC * REC];
	t_fill(want, sizeof(want), 6, 0);
	memcpy(want, "EDITED", 6);
	T_CHECK(n == (long)sizeof(want) && memcmp(d, want, 6) == 0,
		"%s: the edit made after the writer died was overwritten by a replay",
		kill_it ? "SIGKILL" : "_exit");
	T_CHECK(n == (long)sizeof(want) && memcmp(d + 6, want + 6, sizeof(want) - 6) == 0,
		"%s: the writer's data (%ld bytes)", kill_it ? "SIGKILL" : "_exit", n);
	if (n >= 0)
		free(d);
}

/* A writer killed with appends staged (POSIX mode stages them; sync and
 * strict modes too on DAX) leaves the file shorter than what it wrote,
 * the rest in its store. A program without the library then appends to
 * the file: recovery must keep that append, never write the window over it
 * (the window stays apart, as an orphan in .splitfs). The writer is forked
 * from this process before it started on the root, so that it starts on
 * its own, as a program would. */
static void append_after_death(const char *dir)
{
	char *p = t_path(dir, "stale.append");
	pid_t c = t_fork_writer(p, O_RDWR, REC, NREC, 7, true);
	kill(c, SIGKILL);
	int st;
	waitpid(c, &st, 0);
	struct stat at;
	T_REQUIRE(syscall(SYS_newfstatat, AT_FDCWD, p, &at, 0) == 0, "raw stat");
	long fd = syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_APPEND | O_CLOEXEC);
	T_REQUIRE(fd >= 0, "raw open");
	T_REQUIRE(syscall(SYS_write, fd, "EDITED", 6) == 6, "raw append");
	syscall(SYS_close, fd);
	recoveries(dir);
	unsigned char *d;
	long n = t_read_kernel(p, &d), death = (long)at.st_size;
	unsigned char want[NREC * REC];
	t_fill(want, sizeof(want), 7, 0);
	T_CHECK(n == death + 6 && n >= 6 && memcmp(d + n - 6, "EDITED", 6) == 0,
		"the append made after the writer died stays (%ld bytes, %ld at its death)", n,
		death);
	T_CHECK(n >= death && death <= (long)sizeof(want) && memcmp(d, want, (size_t)death) == 0,
		"the writer's bytes in the file at its death");
	if (n >= 0)
		free(d);
}

/* A reader: reads the file front to back with read(); exit 0 when it holds
 * the final header and every record, and its mtime stayed put. */
static int reader(const char *p)
{
	struct stat a, b;
	int fd = open(p, O_RDONLY);
	if (fd < 0 || fstat(fd, &a) != 0)
		return 3;
	unsigned char *d = malloc((size_t)a.st_size + 1);
	long n = 0;
	for (;;) {
		ssize_t r = read(fd, d + n, 4096);
		if (r <= 0)
			break;
		n += r;
	}
	if (fstat(fd, &b) != 0)
		return 3;
	if (memcmp(&a.st_mtim, &b.st_mtim, sizeof(a.st_mtim)) != 0)
		return 4; /* rewritten under the reader */
	if (n != a.st_size || n < 16 || memcmp(d, "FINAL-HEADER....", 16) != 0)
		return 5;
	unsigned char want[REC];
	for (long off = 16, i = 0; off + REC <= n; off += REC, i++) {
		t_fill(want, REC, 8, i * REC);
		if (memcmp(d + off, want, REC) != 0)
			return 6;
	}
	return 0;
}

static void readers_race(const char *dir, const char *self)
{
	char *p = t_path(dir, "race.dat");
	for (int round = 0; round < 6; round++) {
		pid_t c = fork();
		T_REQUIRE(c >= 0, "fork");
		if (c == 0) {
			int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || pwrite(fd, "PLACEHOLDER.....", 16, 0) != 16)
				_exit(3);
			unsigned char buf[REC];
			for (int i = 0; i < 300; i++) {
				t_fill(buf, REC, 8, (long)i * REC);
				if (pwrite(fd, buf, REC, 16 + (off_t)i * REC) != REC)
					_exit(3);
			}
			if (pwrite(fd, "FINAL-HEADER....", 16, 0) != 16)
				_exit(3);
			_exit(0); /* the log still holds every record */
		}
		int st;
		waitpid(c, &st, 0);
		struct stat before, after;
		T_REQUIRE(stat(p, &before) == 0, "stat");
		pid_t r[4];
		char *argv[] = {(char *)self, "--read", p, NULL};
		for (int i = 0; i < 4; i++)
			if (posix_spawn(&r[i], self, NULL, NULL, argv, environ) != 0)
				r[i] = -1;
		for (int i = 0; i < 4; i++) {
			if (r[i] < 0)
				continue;
			waitpid(r[i], &st, 0);
			T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
				"round %d: reader %d saw a wrong file (code %d: 4 rewritten under it, 5 "
				"old header, 6 bad record)",
				round, i, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		}
		T_REQUIRE(stat(p, &after) == 0, "stat");
		T_CHECK(memcmp(&before.st_mtim, &after.st_mtim, sizeof(before.st_mtim)) == 0,
			"round %d: the file was rewritten after its writer left it intact", round);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--read") == 0)
		return reader(argv[2]);
	const char *dir = argc > 1 ? argv[1] : ".";
	append_after_death(dir); /* first: nothing has started this process yet */
	/* The writers below are forked from a process started on the root:
	 * in sync and strict modes they log their appends into the file (their
	 * log holds records), the case those checks are about. */
	struct stat st;
	T_REQUIRE(stat(dir, &st) == 0, "stat of the directory");
	edit_after_death(dir, false);
	edit_after_death(dir, true);
	readers_race(dir, argv[0]);
	return t_result();
}
