/* SPDX-License-Identifier: Apache-2.0 */
/* Description: stdio's output in sync and strict modes. glibc writes a
 * stream's bytes through its internal write, which no interposer sees;
 * under a kernel mounted -o sync each of those writes is durable when it
 * returns, and so must it be under the library. After each step this
 * program makes one getppid() call, a marker: the strace suite checks that
 * every write(2) the process made before a marker (or before its
 * exit_group) is followed by an fsync or fdatasync of that descriptor
 * first. The steps:
 *   - stdout (a file the caller redirected it to: inherited, left to the
 *     kernel): printf and puts into its buffer, a printf larger than the
 *     buffer (written out inside the call), fflush; dprintf(1);
 *   - stderr dup2'd onto a file this process opened (the library's):
 *     fprintf and fputs, unbuffered (written at each call); glibc's error
 *     reporters perror, warn, warnx, error (which writes out stdout's
 *     buffer first) and error_at_line; psignal and psiginfo;
 *   - an unbuffered stream (tee's): fputs, fputc, putc, fwrite;
 *   - an unbuffered wide-oriented stream: fputws, fputwc, putwc, fwprintf,
 *     and their _unlocked forms; a fully buffered one: a fwprintf of a
 *     line written out inside the call, then fclose;
 *   - a line-buffered stream: text without a newline (no write), then a
 *     newline (written);
 *   - a fully buffered stream written with putc_unlocked, inline (glibc's
 *     __overflow writes each full buffer), then fclose;
 *   - stdout's last lines stay buffered: glibc writes them at exit;
 *   - errx onto another file of its own: the message, then exit.
 * Natively and under the library, the files must hold what was written
 * (the caller compares stdout's file with the native run's).
 *   stdio_sync DIR */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <unistd.h>
#include <wchar.h>

#include "helpers.h"

#define BIG 20000 /* larger than a stream's buffer (4 KiB on a regular file) */

static void marker(void)
{
	(void)getppid();
}

/* The file at path holds exactly want. */
static void holds(const char *path, const char *want)
{
	unsigned char *got = NULL;
	long n = t_read_kernel(path, &got);
	size_t len = strlen(want);
	T_CHECK(n == (long)len && memcmp(got, want, len) == 0, "%s: %ld bytes, want %zu", path, n,
		len);
	free(got);
}

static FILE *stream(const char *dir, const char *name, int mode)
{
	FILE *s = fopen(t_path(dir, name), "w");
	T_REQUIRE(s != NULL, "fopen %s", name);
	T_REQUIRE(setvbuf(s, NULL, mode, 0) == 0 || mode == _IOFBF, "setvbuf %s", name);
	return s;
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: stdio_sync DIR");
	const char *dir = argv[1];
	static char big[BIG + 1];
	for (int i = 0; i < BIG; i++)
		big[i] = (char)('a' + i % 26);

	/* stdout, inherited. */
	printf("stdout %d\n", 1);
	puts("stdout 2");
	marker();
	printf("%s\n", big);
	marker();
	T_REQUIRE(fflush(stdout) == 0, "fflush(stdout)");
	marker();
	dprintf(1, "dprintf %d\n", 3);
	marker();

	/* stderr onto a file this process opened. */
	int saved = dup(2);
	int efd = open(t_path(dir, "err"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(saved >= 0 && efd >= 0 && dup2(efd, 2) == 2, "stderr onto err");
	close(efd);
	fprintf(stderr, "err %d\n", 1);
	marker();
	fputs("err 2\n", stderr);
	marker();
	errno = ENOENT;
	perror("perror");
	marker();
	errno = EACCES;
	warn("warn %d", 3);
	marker();
	warnx("warnx %d", 4);
	marker();
	printf("stdout before error\n"); /* buffered: error writes it out */
	error(0, 0, "error %d", 5);
	marker();
	error_at_line(0, EINVAL, "file.c", 6, "error_at_line %d", 6);
	marker();
	psignal(SIGINT, "psignal");
	marker();
	siginfo_t si = {.si_signo = SIGUSR1, .si_code = SI_USER};
	si.si_pid = getpid();
	si.si_uid = getuid();
	psiginfo(&si, "psiginfo");
	marker();
	T_REQUIRE(dup2(saved, 2) == 2, "stderr back");
	close(saved);
	static char want[1024];
	snprintf(want, sizeof(want),
		 "err 1\nerr 2\nperror: %s\n%s: warn 3: %s\n%s: warnx 4\n%s: error 5\n"
		 "%s:file.c:6: error_at_line 6: %s\npsignal: %s\n"
		 "psiginfo: %s (Signal sent by kill() %d %d)\n",
		 strerror(ENOENT), program_invocation_short_name, strerror(EACCES),
		 program_invocation_short_name, program_invocation_name, program_invocation_name,
		 strerror(EINVAL), strsignal(SIGINT), strsignal(SIGUSR1), (int)si.si_pid,
		 (int)si.si_uid);
	holds(t_path(dir, "err"), want);

	/* An unbuffered stream. */
	FILE *u = stream(dir, "unbuffered", _IONBF);
	fputs("one\n", u);
	marker();
	fputc('2', u);
	marker();
	putc('\n', u);
	marker();
	T_CHECK(fwrite("three\n", 6, 1, u) == 1, "fwrite");
	marker();
	T_CHECK(fclose(u) == 0, "fclose unbuffered");
	holds(t_path(dir, "unbuffered"), "one\n2\nthree\n");

	/* An unbuffered wide-oriented stream. */
	FILE *w = stream(dir, "wide", _IONBF);
	T_CHECK(fputws(L"wide one\n", w) >= 0, "fputws");
	marker();
	T_CHECK(fputwc(L'2', w) == L'2', "fputwc");
	marker();
	T_CHECK(putwc(L'\n', w) == L'\n', "putwc");
	marker();
	T_CHECK(fwprintf(w, L"three %d\n", 3) == 8, "fwprintf");
	marker();
	T_CHECK(fputws_unlocked(L"four\n", w) >= 0, "fputws_unlocked");
	marker();
	T_CHECK(fputwc_unlocked(L'5', w) == L'5', "fputwc_unlocked");
	marker();
	T_CHECK(putwc_unlocked(L'\n', w) == L'\n', "putwc_unlocked");
	marker();
	T_CHECK(fclose(w) == 0, "fclose wide");
	holds(t_path(dir, "wide"), "wide one\n2\nthree 3\nfour\n5\n");

	/* A fully buffered wide stream: glibc writes what it converts 16
	 * bytes at a time in the C locale (natively too), so a line of 200
	 * goes out inside the call. */
	FILE *wb = stream(dir, "widebig", _IOFBF);
	T_CHECK(fwprintf(wb, L"%.200s\n", big) == 201, "fwprintf 200");
	marker();
	T_CHECK(fclose(wb) == 0, "fclose widebig");
	marker();
	char line[202];
	snprintf(line, sizeof(line), "%.200s\n", big);
	holds(t_path(dir, "widebig"), line);

	/* A line-buffered stream. */
	FILE *l = stream(dir, "lines", _IOLBF);
	fprintf(l, "no newline yet");
	T_CHECK(__fpending(l) == 14, "a line's start stays buffered: %zu", __fpending(l));
	marker();
	fprintf(l, ", now one\n");
	marker();
	T_CHECK(fclose(l) == 0, "fclose lines");
	holds(t_path(dir, "lines"), "no newline yet, now one\n");

	/* Inline putc_unlocked: glibc's __overflow writes each full buffer. */
	FILE *b = stream(dir, "inline", _IOFBF);
	for (int i = 0; i < BIG; i++)
		putc_unlocked(big[i], b);
	marker();
	T_CHECK(fclose(b) == 0, "fclose inline");
	marker();
	holds(t_path(dir, "inline"), big);

	/* Buffered at exit. */
	printf("stdout %d\n", 4);
	fputs("stdout 5\n", stdout);
	/* errx's message onto a file of its own, then exit with the result. */
	int r = t_result();
	int xfd = open(t_path(dir, "errx"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(xfd >= 0 && dup2(xfd, 2) == 2, "stderr onto errx");
	errx(r, "errx %d", 7);
}
