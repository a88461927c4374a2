/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a program written and closed can be run at once, as under
 * the kernel: the library lets go of what it held open for writing before
 * a fork's child or a spawn executes it (otherwise execve fails with
 * ETXTBSY). A script written through a write-only open (a shell's
 * `echo ... > script`: sync and strict modes manage such a writer from
 * its open, and an inode not leased yet kept its write-only descriptor
 * cached), through one dup2'd onto stdout by stdio, and through a
 * read-write open
 * after writes enough for a lease; each run by fork+execve and by
 * posix_spawn.
 *   exec_written DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

extern char **environ;

#define STATUS 7
#define PADDING 300 /* comment lines: writes enough for a lease */

/* The script at path exits STATUS; written in `lines` writes of one line
 * each through fd, then closed. */
static void write_script(int fd, int lines, const char *what)
{
	T_REQUIRE(fd >= 0, "open (%s)", what);
	static const char head[] = "#!/bin/sh\n";
	char tail[32];
	snprintf(tail, sizeof(tail), "exit %d\n", STATUS);
	T_CHECK(write(fd, head, strlen(head)) == (ssize_t)strlen(head), "write (%s)", what);
	for (int i = 0; i < lines; i++)
		T_CHECK(write(fd, "# padding\n", 10) == 10, "write %d (%s)", i, what);
	T_CHECK(write(fd, tail, strlen(tail)) == (ssize_t)strlen(tail), "write (%s)", what);
	T_CHECK(close(fd) == 0, "close (%s)", what);
}

static void runs(const char *path, const char *what)
{
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		char *argv[] = {(char *)path, NULL};
		execve(path, argv, environ);
		_exit(errno == ETXTBSY ? 100 : 101);
	}
	int st;
	T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == STATUS,
		"fork+execve of the script (%s): status %d%s", what, WEXITSTATUS(st),
		WEXITSTATUS(st) == 100 ? " (ETXTBSY)" : "");
	char *argv[] = {(char *)path, NULL};
	int rc = posix_spawn(&pid, path, NULL, NULL, argv, environ);
	T_CHECK(rc == 0, "posix_spawn of the script (%s): %s", what, strerror(rc));
	if (rc == 0)
		T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == STATUS,
			"the spawned script (%s) exited %d", what, WEXITSTATUS(st));
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: exec_written DIR");
	const char *path = t_path(argv[1], "script");

	write_script(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755), 0, "write-only");
	runs(path, "write-only");

	/* As bash runs `echo ... > script`: the open dup2'd onto stdout,
	 * written by stdio (unseen), stdout put back. */
	fflush(stdout);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	int saved = dup(STDOUT_FILENO);
	T_REQUIRE(fd >= 0 && saved >= 0 && dup2(fd, STDOUT_FILENO) == STDOUT_FILENO, "onto stdout");
	T_CHECK(close(fd) == 0, "close the open");
	T_CHECK(printf("#!/bin/sh\nexit %d\n", STATUS) > 0 && fflush(stdout) == 0, "printf");
	T_REQUIRE(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO && close(saved) == 0, "stdout back");
	runs(path, "stdio through stdout");

	write_script(open(path, O_RDWR | O_CREAT | O_TRUNC, 0755), PADDING, "read-write, leased");
	runs(path, "read-write, leased");
	write_script(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755), PADDING, "write-only, leased");
	runs(path, "write-only, leased");
	return t_result();
}
