/* SPDX-License-Identifier: Apache-2.0 */
/* glibc's error reporters in sync and strict modes: perror, warn and err
 * (BSD's), error and error_at_line (GNU's), psignal and psiginfo write to
 * stderr with glibc's internal calls, which no wrapper sees (stdio_out.c);
 * when stderr is a file of the root (a program's `2>>log`), the bytes must
 * be durable when the call returns, or before it exits (err, and error
 * with a status). Each calls glibc's own and then syncs stderr's
 * descriptor. glibc has no va_list form of error: the message is
 * formatted here and handed to it as "%s" (what it prints is the same: its
 * program name, the message, the errno text). */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <error.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fs/metasync.h"
#include "../sys/real.h"
#include "stdio_out.h"
#include "wrap.h"

/* The message of fmt and ap, in buf when it fits, else allocated (*big,
 * freed by the caller), else cut to buf. errno is the caller's (%m). */
static const char *message(char *buf, size_t len, char **big, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int saved = errno;
	int n = vsnprintf(buf, len, fmt, ap);
	*big = NULL;
	if (n >= 0 && (size_t)n >= len) {
		errno = saved;
		if (vasprintf(big, fmt, again) < 0)
			*big = NULL;
	}
	va_end(again);
	errno = saved;
	return *big ? *big : n >= 0 ? buf : fmt;
}

SFS_EXPORT void perror(const char *s)
{
	SFS_REAL(perror)(s);
	sfs_stdio_sent(stderr);
}

SFS_EXPORT void psignal(int sig, const char *s)
{
	SFS_REAL(psignal)(sig, s);
	sfs_stdio_sent(stderr);
}

SFS_EXPORT void psiginfo(const siginfo_t *info, const char *s)
{
	SFS_REAL(psiginfo)(info, s);
	sfs_stdio_sent(stderr);
}

SFS_EXPORT void vwarn(const char *fmt, va_list ap)
{
	SFS_REAL(vwarn)(fmt, ap);
	sfs_stdio_sent(stderr);
}

SFS_EXPORT void vwarnx(const char *fmt, va_list ap)
{
	SFS_REAL(vwarnx)(fmt, ap);
	sfs_stdio_sent(stderr);
}

SFS_EXPORT void warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

SFS_EXPORT void warnx(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
}

/* glibc's err functions are its warn functions, then exit. */
SFS_EXPORT void verr(int status, const char *fmt, va_list ap)
{
	vwarn(fmt, ap);
	exit(status);
}

SFS_EXPORT void verrx(int status, const char *fmt, va_list ap)
{
	vwarnx(fmt, ap);
	exit(status);
}

SFS_EXPORT void err(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verr(status, fmt, ap);
}

SFS_EXPORT void errx(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verrx(status, fmt, ap);
}

/* error and error_at_line: the message formatted here, glibc's own
 * printing it (error_at_line's form when at_line), stderr
 * synced, then the exit for a status. glibc writes out stdout first with
 * its internal fflush: done here with the wrapped one, which syncs it. */
static void report(int status, int errnum, bool at_line, const char *file, unsigned line,
		   const char *fmt, va_list ap)
{
	char buf[1024], *big;
	const char *msg = message(buf, sizeof(buf), &big, fmt, ap);
	if (sfs_metasync_on())
		fflush(stdout);
	if (at_line)
		SFS_REAL(error_at_line)(0, errnum, file, line, "%s", msg);
	else
		SFS_REAL(error)(0, errnum, "%s", msg);
	free(big);
	sfs_stdio_sent(stderr);
	if (status)
		exit(status);
}

SFS_EXPORT void error(int status, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(status, errnum, false, NULL, 0, fmt, ap);
	va_end(ap);
}

/* error_one_per_line: glibc's error_at_line prints nothing, and does not
 * exit, for a second error at the line it reported last. Its own record is
 * not to be seen: kept here too, for the exit. */
static const char *last_file;
static unsigned last_line;

SFS_EXPORT void error_at_line(int status, int errnum, const char *file, unsigned line,
			      const char *fmt, ...)
{
	if (error_one_per_line) {
		bool same =
			last_line == line &&
			(file == last_file || (file && last_file && strcmp(file, last_file) == 0));
		last_file = file;
		last_line = line;
		if (same)
			return;
	}
	va_list ap;
	va_start(ap, fmt);
	report(status, errnum, true, file, line, fmt, ap);
	va_end(ap);
}
