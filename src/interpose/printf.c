/* SPDX-License-Identifier: Apache-2.0 */
/* dprintf and vdprintf. glibc formats into a stream of its own on the
 * descriptor and writes through its internal write, which no interposer
 * sees: the bytes would go to the kernel at the kernel's offset of the
 * open file, not at the library's, and over the application's own writes
 * (fs/kpos.h). For a descriptor the library manages, or may (pending), the
 * text is formatted here and written with write(), as the application
 * would have. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "stdio_out.h"
#include "wrap.h"

/* glibc's fortified formatter (flag: _FORTIFY_SOURCE's level). */
int __vasprintf_chk(char **out, int flag, const char *fmt, va_list ap);
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);
int __dprintf_chk(int fd, int flag, const char *fmt, ...);

/* Managed or pending, or (sync and strict modes) a file left to the kernel
 * whose writes write() makes durable (SFS_FD_DSYNC). */
static bool library_writes(int fd)
{
	return sfs_active() && fd >= 0 &&
	       (sfs_fd_kind(fd) != SFS_FD_KIND_KERNEL || sfs_stdio_syncs(fd));
}

/* Writes the n bytes of text at fd as glibc's stream would: until all are
 * written or a write fails. Returns n, or -1 (errno) as vdprintf does. */
static int write_text(int fd, char *text, int n)
{
	if (n < 0)
		return -1;
	int done = 0;
	while (done < n) {
		ssize_t w = write(fd, text + done, (size_t)(n - done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			free(text);
			return -1;
		}
		done += (int)w;
	}
	free(text);
	return n;
}

SFS_EXPORT int vdprintf(int fd, const char *fmt, va_list ap)
{
	if (!library_writes(fd))
		return SFS_REAL(vdprintf)(fd, fmt, ap);
	char *text = NULL;
	int n = vasprintf(&text, fmt, ap); /* before text is read */
	return write_text(fd, text, n);
}

SFS_EXPORT int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
	if (!library_writes(fd))
		return SFS_REAL(__vdprintf_chk)(fd, flag, fmt, ap);
	char *text = NULL;
	int n = __vasprintf_chk(&text, flag, fmt, ap);
	return write_text(fd, text, n);
}

SFS_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vdprintf(fd, fmt, ap);
	va_end(ap);
	return r;
}

SFS_EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = __vdprintf_chk(fd, flag, fmt, ap);
	va_end(ap);
	return r;
}
