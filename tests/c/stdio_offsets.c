/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a file opened onto stdin or stdout, read and written both
 * through stdio (glibc's internal read and write, which the library does
 * not see) and with the application's own read, write and lseek, keeps one
 * offset, as under the kernel:
 *   - stdout: a file first written often enough to be the library's
 *     (staged appends, a lease), then dup2'd onto 1; then printf+fflush
 *     and write(1) in turn, a forked child's write(1) and a child started
 *     with exec between them, ftell and lseek(SEEK_CUR) checked on the
 *     way: the file holds every line once, in order (the library kept its
 *     own offset: stdio's lines were overwritten by the next write, and
 *     a child started where the library's last write ended);
 *   - stdin: a file dup2'd onto 0, read by getchar (unbuffered) and by
 *     read(0) in turn: each gets the bytes after the other's;
 *   - dprintf on a descriptor the library manages lands after write()'s.
 *   stdio_offsets DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define WARM 100   /* writes before the dup2: a managed, leased file */
#define ROUNDS 120 /* stdio and write() lines after it */

/* The file's content is want (len bytes). */
static void holds(const char *path, const char *want, size_t len, const char *what)
{
	unsigned char *got = NULL;
	long n = t_read_kernel(path, &got);
	size_t same = 0;
	while (n >= 0 && same < len && same < (size_t)n && got[same] == (unsigned char)want[same])
		same++;
	T_CHECK(n == (long)len && same == len, "%s: %ld bytes, %zu of %zu as written", what, n,
		same, len);
	free(got);
}

/* Appends s to the expected content (want, *len) and returns s's length. */
static size_t expect(char *want, size_t *len, const char *s)
{
	size_t n = strlen(s);
	memcpy(want + *len, s, n);
	*len += n;
	return n;
}

static void child_writes(const char *line)
{
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0)
		_exit(write(STDOUT_FILENO, line, strlen(line)) == (ssize_t)strlen(line) ? 0 : 1);
	int st;
	T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		"the child wrote %s", line);
}

static void child_execs(const char *word)
{
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		execl("/bin/echo", "echo", word, (char *)NULL);
		_exit(127);
	}
	int st;
	T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "echo %s",
		word);
}

static void through_stdout(const char *path)
{
	static char want[1 << 16];
	size_t len = 0;
	char line[64];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);
	for (int i = 0; i < WARM; i++) {
		snprintf(line, sizeof(line), "warm %d\n", i);
		T_CHECK(write(fd, line, strlen(line)) == (ssize_t)expect(want, &len, line),
			"warm write %d", i);
	}
	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	T_REQUIRE(saved >= 0 && dup2(fd, STDOUT_FILENO) == STDOUT_FILENO && close(fd) == 0,
		  "dup2 onto 1");
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(line, sizeof(line), "stdio %d\n", i);
		expect(want, &len, line);
		T_CHECK(fputs(line, stdout) >= 0 && fflush(stdout) == 0, "stdio line %d", i);
		long told = ftell(stdout); /* stdio's own lseek, unseen */
		T_CHECK(told == (long)len, "ftell after stdio line %d: %ld, not %zu", i, told, len);
		snprintf(line, sizeof(line), "write %d\n", i);
		T_CHECK(write(STDOUT_FILENO, line, strlen(line)) ==
				(ssize_t)expect(want, &len, line),
			"write line %d", i);
		told = ftell(stdout);
		T_CHECK(told == (long)len, "ftell after write %d: %ld, not %zu", i, told, len);
		if (i % 40 == 7) {
			snprintf(line, sizeof(line), "child %d\n", i);
			child_writes(line);
			expect(want, &len, line);
			snprintf(line, sizeof(line), "exec%d", i);
			child_execs(line);
			expect(want, &len, line);
			expect(want, &len, "\n");
		}
		off_t at = lseek(STDOUT_FILENO, 0, SEEK_CUR);
		T_CHECK(at == (off_t)len, "lseek after round %d: %lld, not %zu", i, (long long)at,
			len);
		if (at != (off_t)len)
			break;
	}
	fflush(stdout);
	T_CHECK(lseek(STDOUT_FILENO, 0, SEEK_CUR) == (off_t)len, "the offset is the end (%zu)",
		len);
	T_REQUIRE(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO && close(saved) == 0, "1 back");
	holds(path, want, len, "stdout");
}

static void through_stdin(const char *path)
{
	static const char text[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	T_REQUIRE(t_write_kernel(path, (const unsigned char *)text, (long)strlen(text), 4096) == 0,
		  "write %s", path);
	int fd = open(path, O_RDONLY);
	T_REQUIRE(fd >= 0, "open %s", path);
	int saved = dup(STDIN_FILENO);
	T_REQUIRE(saved >= 0 && dup2(fd, STDIN_FILENO) == STDIN_FILENO && close(fd) == 0,
		  "dup2 onto 0");
	setvbuf(stdin, NULL, _IONBF, 0);
	size_t at = 0;
	while (at < strlen(text)) {
		int c = getchar();
		T_CHECK(c == text[at], "getchar at %zu: %d", at, c);
		at++;
		char buf[3];
		size_t left = strlen(text) - at;
		size_t want = left < sizeof(buf) ? left : sizeof(buf);
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
		T_CHECK(n == (ssize_t)want && memcmp(buf, text + at, want) == 0,
			"read at %zu: %zd bytes", at, n);
		if (n != (ssize_t)want)
			break;
		at += want;
	}
	T_REQUIRE(dup2(saved, STDIN_FILENO) == STDIN_FILENO && close(saved) == 0, "0 back");
}

static void through_dprintf(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);
	static char want[1 << 16];
	size_t len = 0;
	char line[64];
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(line, sizeof(line), "write %d\n", i);
		T_CHECK(write(fd, line, strlen(line)) == (ssize_t)expect(want, &len, line),
			"write %d", i);
		snprintf(line, sizeof(line), "dprintf %d\n", i);
		T_CHECK(dprintf(fd, "dprintf %d\n", i) == (int)expect(want, &len, line),
			"dprintf %d", i);
	}
	T_CHECK(close(fd) == 0, "close");
	holds(path, want, len, "dprintf");
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: stdio_offsets DIR");
	through_stdout(t_path(argv[1], "out"));
	through_stdin(t_path(argv[1], "in"));
	through_dprintf(t_path(argv[1], "log"));
	return t_result();
}
