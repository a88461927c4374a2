/* SPDX-License-Identifier: Apache-2.0 */
/* Description: writes the library does not see land where the kernel
 * would put them. stdio writes through glibc's internal write, not the
 * exported one (as printf to stdout here): a shell's builtin printf after
 * `> f` or `>> f`, a program that dup2s a log onto its stdout. Such a write goes to the kernel at the
 * position and with the O_APPEND of the descriptor's open file, so the
 * library must leave that open file as the application made it:
 *   - a file written 4 bytes, read often enough to have an inode,
 *     closed, opened again with O_TRUNC and written 2 bytes: the file is
 *     those 2 bytes (the library gave the open its old open file, at
 *     offset 4: the 2 bytes landed there, after a hole; bash's
 *     `printf x > f` twice left 7 zero bytes before the second);
 *   - a file appended to by another process, then opened with O_APPEND
 *     and dup2'd onto stdout, then written 2 bytes through stdout: they
 *     come last (the library took O_APPEND off the open file, whose offset
 *     stayed 0: they overwrote the start of the file); the same onto
 *     another descriptor;
 *   - a write-only open without O_APPEND onto stdout.
 *   unseen_writes DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define BLOCK 4096
#define BLOCKS 64 /* reads: more than a pending descriptor's */

/* A write the library does not see: stdio's on stdout, which glibc makes
 * with its internal write (syscall() and dprintf are interposed). Through
 * a descriptor other than 1, stdout is pointed at its open file for it. */
static void raw_write(int fd, const char *s)
{
	fflush(stdout);
	int saved = fd == STDOUT_FILENO ? -1 : dup(STDOUT_FILENO);
	T_REQUIRE(fd == STDOUT_FILENO || (saved >= 0 && dup2(fd, STDOUT_FILENO) == STDOUT_FILENO),
		  "stdout onto %d", fd);
	T_CHECK(fputs(s, stdout) >= 0 && fflush(stdout) == 0, "unseen write of %s", s);
	if (saved >= 0)
		T_REQUIRE(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO && close(saved) == 0,
			  "stdout back");
}

/* The file's content is want. */
static void holds(const char *path, const char *want, const char *what)
{
	unsigned char *got = NULL;
	long n = t_read_kernel(path, &got);
	T_CHECK(n == (long)strlen(want) && memcmp(got, want, strlen(want)) == 0,
		"%s: %ld bytes, not \"%s\"", what, n, want);
	free(got);
}

/* Another process appends s to path, as `echo >> path` in a child. */
static void other_appends(const char *path, const char *s)
{
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_APPEND);
		_exit(fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : 1);
	}
	int st;
	T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		"the other process appended");
}

/* A file of "AAAA", to which another process appends "XX\n"; then it is
 * opened with flags and dup2'd onto target, and "BB" goes through target
 * unseen. */
static void through_dup(const char *path, int flags, int target, const char *want)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);
	T_CHECK(write(fd, "AAAA", 4) == 4 && close(fd) == 0, "write AAAA");
	other_appends(path, "XX\n");
	fd = open(path, flags);
	T_REQUIRE(fd >= 0, "open %s", path);
	int saved = target <= STDERR_FILENO ? dup(target) : -1;
	T_REQUIRE(dup2(fd, target) == target && close(fd) == 0, "dup2 onto %d", target);
	raw_write(target, "BB");
	if (saved >= 0)
		T_REQUIRE(dup2(saved, target) == target && close(saved) == 0, "%d back", target);
	else
		T_CHECK(close(target) == 0, "close %d", target);
	char what[64];
	snprintf(what, sizeof(what), "flags %#x onto %d", flags, target);
	holds(path, want, what);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: unseen_writes DIR");
	const char *path = t_path(argv[1], "f");

	/* Reopened with O_TRUNC after the process had an inode of it: an
	 * unseen write first (the open file's offset is then 4), then reads
	 * enough for an inode, then the close. */
	static unsigned char got[BLOCK];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);
	raw_write(fd, "AAAA");
	for (int i = 0; i < BLOCKS; i++)
		T_CHECK(pread(fd, got, BLOCK, 0) == 4, "read %d", i);
	T_CHECK(close(fd) == 0, "close");
	fd = open(path, O_WRONLY | O_TRUNC);
	T_REQUIRE(fd >= 0, "reopen %s with O_TRUNC", path);
	raw_write(fd, "BB");
	T_CHECK(close(fd) == 0, "close again");
	holds(path, "BB", "reopened with O_TRUNC");

	through_dup(path, O_WRONLY | O_APPEND, STDOUT_FILENO, "AAAAXX\nBB");
	through_dup(path, O_WRONLY | O_APPEND, 7, "AAAAXX\nBB");
	through_dup(path, O_WRONLY | O_TRUNC, STDOUT_FILENO, "BB");
	return t_result();
}
