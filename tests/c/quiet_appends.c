/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the library writes nothing on the program's stderr for
 * what its documentation already says. In strict mode an O_APPEND write
 * to a file another process has open is durable but not atomic (README,
 * consistency modes); the library said so on stderr, once per process,
 * and a program that checks its own output failed: git's t5526 (many git
 * processes append to one GIT_TRACE file) found the line in `git fetch`'s
 * stderr. Here a child holds the file open while this process appends
 * records to it with O_APPEND, its stderr sent to a file: the file must
 * stay empty, and the records must all be there, in order.
 *   quiet_appends DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define RECORDS 32
#define REC 64

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: quiet_appends DIR");
	const char *path = t_path(argv[1], "shared.log");
	const char *errpath = t_path(argv[1], "stderr.txt");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0 && close(fd) == 0, "create %s", path);

	/* The child holds the file open until told to go. */
	int ready[2], go[2];
	T_REQUIRE(pipe(ready) == 0 && pipe(go) == 0, "pipes");
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		int r = open(path, O_RDONLY);
		char c = r >= 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(r >= 0 ? 0 : 1);
	}
	char c = 0;
	T_REQUIRE(read(ready[0], &c, 1) == 1 && c == 'y', "the child opened the file");

	int saved = dup(2);
	int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(saved >= 0 && err >= 0 && dup2(err, 2) == 2, "stderr to %s", errpath);
	fd = open(path, O_WRONLY | O_APPEND);
	T_REQUIRE(fd >= 0, "open %s with O_APPEND", path);
	char rec[REC];
	for (int i = 0; i < RECORDS; i++) {
		memset(rec, 'a' + i % 26, sizeof(rec));
		rec[REC - 1] = '\n';
		T_CHECK(write(fd, rec, REC) == REC, "append %d", i);
	}
	T_CHECK(close(fd) == 0, "close");
	T_REQUIRE(dup2(saved, 2) == 2 && close(saved) == 0 && close(err) == 0, "stderr back");

	T_CHECK(write(go[1], "g", 1) == 1, "let the child go");
	int st;
	T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child");

	unsigned char *said = NULL;
	long n = t_read_kernel(errpath, &said);
	T_CHECK(n == 0, "the library wrote %ld bytes on stderr: %.*s", n, (int)(n > 200 ? 200 : n),
		said ? (const char *)said : "");
	unsigned char *got = NULL;
	long len = t_read_kernel(path, &got);
	T_CHECK(len == RECORDS * REC, "the log has %ld bytes, not %d", len, RECORDS * REC);
	for (int i = 0; got && i < RECORDS && len == RECORDS * REC; i++)
		T_CHECK(got[i * REC] == 'a' + i % 26 && got[i * REC + REC - 1] == '\n', "record %d",
			i);
	free(said);
	free(got);
	return t_result();
}
