/* SPDX-License-Identifier: Apache-2.0 */
/* stdio's output in sync and strict modes. glibc writes a stream's bytes
 * through its internal write, which no wrapper sees (stdio.c); under a
 * kernel mounted -o sync each of those writes is durable when it returns,
 * so here too: the output functions below sync a stream's descriptor when
 * the call sent bytes to the kernel (an unbuffered stream, stderr or tee's,
 * at each call; a line-buffered one at each line; a fully buffered one
 * each time its buffer goes out). What a call sent is what left the
 * buffer: it held `before` bytes (__fpending) and the call added `added`,
 * so fewer than before + added left after it means some went out. The
 * stream is locked meanwhile (flockfile nests), so another thread's output
 * does not blur the count. What streams still buffer at exit goes out in
 * glibc's _IO_cleanup, after every destructor: sfs_stdio_exit writes it out
 * and syncs it first. In POSIX mode each wrapper costs two loads.
 *
 * The wide-character functions (fputwc, fputws, fwprintf, ...) the same
 * way: a wide stream's __fpending counts wide characters, as `added` does
 * for them (glibc writes the bytes it converts at once: a wide stream
 * buffers only wide characters).
 *
 * glibc's error reporters (perror, err, warn, error, psignal): stdio_err.c.
 *
 * Not covered: a stream's bytes written by an inline putc_unlocked that
 * never filled the buffer, into a stream other than stdout or stderr,
 * flushed at exit. */
#define _GNU_SOURCE
#include "stdio_out.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "../fs/fdtable.h"
#include "../fs/metasync.h"
#include "../sys/real.h"
#include "wrap.h"

/* glibc's, declared in no public header: the fortified formatters and the
 * call an inline putc_unlocked makes on a full buffer (libio.h). */
int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap);
int __overflow(FILE *fp, int c);
int __vfwprintf_chk(FILE *fp, int flag, const wchar_t *fmt, va_list ap);

/* Names the optimizing headers make macros or inline functions of (vprintf
 * and putchar too): the wrappers below define them under their symbol
 * names (asm labels). */
#undef putc
#undef putchar
#undef putc_unlocked
#undef putchar_unlocked
#undef fputc_unlocked
#undef fwrite_unlocked
#undef fputs_unlocked
#undef putwc
#undef putwchar
#undef putwc_unlocked
#undef putwchar_unlocked
#undef fputwc_unlocked
#undef fputws_unlocked

bool sfs_stdio_syncs(int fd)
{
	if (fd < 0 || !sfs_metasync_on() || !sfs_live())
		return false;
	return sfs_fd_is_dsync(fd) || sfs_fd_kind(fd) == SFS_FD_KIND_MANAGED;
}

/* Descriptors whose stream kept bytes in its buffer after a wrapped call:
 * synced at exit once glibc's last flush is made here. Past the bitmap,
 * `held_far` syncs every descriptor sfs_stdio_syncs names. */
#define HELD_FDS 1024
static _Atomic uint64_t held[HELD_FDS / 64];
static atomic_bool held_far;

static void hold(int fd)
{
	if (fd < HELD_FDS)
		atomic_fetch_or_explicit(&held[fd / 64], 1ull << (fd % 64), memory_order_relaxed);
	else
		atomic_store_explicit(&held_far, true, memory_order_relaxed);
}

/* A stream's state around one output call. */
struct out {
	FILE *fp;
	int fd;
	size_t before; /* bytes buffered before the call */
	bool locked;   /* flockfile taken (not for the _unlocked forms) */
};

/* Whether fp's output must be synced (sfs_stdio_syncs); then o holds what
 * it buffers, under the stream's lock unless the caller holds it. */
static bool out_begin(FILE *fp, struct out *o, bool lock)
{
	if (sfs_likely(!sfs_metasync_on()) || !fp)
		return false;
	int saved = errno;
	int fd = fileno_unlocked(fp); /* -1 for a memory stream */
	errno = saved;
	if (!sfs_stdio_syncs(fd))
		return false;
	if (lock)
		flockfile(fp);
	o->fp = fp;
	o->fd = fd;
	o->before = __fpending(fp);
	o->locked = lock;
	return true;
}

/* The call has added `added` bytes to the stream (SIZE_MAX: unknown) and
 * returned r: syncs what it sent. Returns r, or fail where the sync failed
 * (the bytes may not be durable: the call fails, as the kernel's write
 * would have). */
static long out_end(struct out *o, size_t added, long r, long fail)
{
	size_t after = __fpending(o->fp);
	if (o->locked)
		funlockfile(o->fp);
	if (after > 0)
		hold(o->fd);
	bool sent = added >= SIZE_MAX - o->before || after < o->before + added;
	if (!sent)
		return r;
	int saved = errno;
	if (SFS_REAL(fdatasync)(o->fd) == 0 || errno == EINVAL || errno == EBADF ||
	    errno == EROFS) {
		errno = saved;
		return r;
	}
	return fail;
}

#define OUT(fp, lock, added, call, fail)                                                           \
	({                                                                                         \
		struct out o_;                                                                     \
		__typeof__(call) r_;                                                               \
		if (sfs_likely(!out_begin(fp, &o_, lock)))                                         \
			r_ = (call);                                                               \
		else                                                                               \
			r_ = (__typeof__(call))out_end(&o_, (added), (long)(call), (long)(fail));  \
		r_;                                                                                \
	})

/* What an fwrite of n items of size bytes adds (SIZE_MAX: more than fits). */
static size_t fwrite_bytes(size_t size, size_t n)
{
	if (size == 0 || n == 0)
		return 0;
	return n <= SIZE_MAX / size ? size * n : SIZE_MAX;
}

SFS_EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *fp)
{
	size_t bytes = fwrite_bytes(size, n);
	return OUT(fp, true, bytes, SFS_REAL(fwrite)(p, size, n, fp), 0);
}

size_t sfs_fwrite_unlocked(const void *p, size_t size, size_t n,
			   FILE *fp) __asm__("fwrite_unlocked");
SFS_EXPORT size_t sfs_fwrite_unlocked(const void *p, size_t size, size_t n, FILE *fp)
{
	size_t bytes = fwrite_bytes(size, n);
	return OUT(fp, false, bytes, SFS_REAL(fwrite_unlocked)(p, size, n, fp), 0);
}

SFS_EXPORT int fputs(const char *s, FILE *fp)
{
	return OUT(fp, true, strlen(s), SFS_REAL(fputs)(s, fp), EOF);
}

int sfs_fputs_unlocked(const char *s, FILE *fp) __asm__("fputs_unlocked");
SFS_EXPORT int sfs_fputs_unlocked(const char *s, FILE *fp)
{
	return OUT(fp, false, strlen(s), SFS_REAL(fputs_unlocked)(s, fp), EOF);
}

SFS_EXPORT int puts(const char *s)
{
	return OUT(stdout, true, strlen(s) + 1, SFS_REAL(puts)(s), EOF);
}

SFS_EXPORT int fputc(int c, FILE *fp)
{
	return OUT(fp, true, 1, SFS_REAL(fputc)(c, fp), EOF);
}

int sfs_putc(int c, FILE *fp) __asm__("putc");
SFS_EXPORT int sfs_putc(int c, FILE *fp)
{
	return OUT(fp, true, 1, SFS_REAL(fputc)(c, fp), EOF);
}

/* glibc's own name of putc, which old programs call. */
int _IO_putc(int c, FILE *fp);
SFS_EXPORT int _IO_putc(int c, FILE *fp)
{
	return OUT(fp, true, 1, SFS_REAL(fputc)(c, fp), EOF);
}

int sfs_putchar(int c) __asm__("putchar");
SFS_EXPORT int sfs_putchar(int c)
{
	return OUT(stdout, true, 1, SFS_REAL(fputc)(c, stdout), EOF);
}

int sfs_fputc_unlocked(int c, FILE *fp) __asm__("fputc_unlocked");
SFS_EXPORT int sfs_fputc_unlocked(int c, FILE *fp)
{
	return OUT(fp, false, 1, SFS_REAL(fputc_unlocked)(c, fp), EOF);
}

int sfs_putc_unlocked(int c, FILE *fp) __asm__("putc_unlocked");
SFS_EXPORT int sfs_putc_unlocked(int c, FILE *fp)
{
	return OUT(fp, false, 1, SFS_REAL(fputc_unlocked)(c, fp), EOF);
}

int sfs_putchar_unlocked(int c) __asm__("putchar_unlocked");
SFS_EXPORT int sfs_putchar_unlocked(int c)
{
	return OUT(stdout, false, 1, SFS_REAL(fputc_unlocked)(c, stdout), EOF);
}

/* An inline putc_unlocked found the buffer full: glibc writes it out and
 * buffers c (or writes it, unbuffered). */
SFS_EXPORT int __overflow(FILE *fp, int c)
{
	return OUT(fp, false, c == EOF ? 0 : 1, SFS_REAL(__overflow)(fp, c), EOF);
}

/* glibc's formatter: the fortified one for flag >= 0 (its level). */
static int real_format(FILE *fp, int flag, const char *fmt, va_list ap)
{
	return flag >= 0 ? SFS_REAL(__vfprintf_chk)(fp, flag, fmt, ap) :
			   SFS_REAL(vfprintf)(fp, fmt, ap);
}

/* The formatters: what a call added is its result (a failed call is
 * synced whatever it sent). */
static int format(FILE *fp, int flag, const char *fmt, va_list ap)
{
	struct out o;
	if (sfs_likely(!out_begin(fp, &o, true)))
		return real_format(fp, flag, fmt, ap);
	int r = real_format(fp, flag, fmt, ap);
	return (int)out_end(&o, r >= 0 ? (size_t)r : SIZE_MAX, r, -1);
}

SFS_EXPORT int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
	return format(fp, -1, fmt, ap);
}

int sfs_vprintf(const char *fmt, va_list ap) __asm__("vprintf");
SFS_EXPORT int sfs_vprintf(const char *fmt, va_list ap)
{
	return format(stdout, -1, fmt, ap);
}

SFS_EXPORT int fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = format(fp, -1, fmt, ap);
	va_end(ap);
	return r;
}

SFS_EXPORT int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = format(stdout, -1, fmt, ap);
	va_end(ap);
	return r;
}

SFS_EXPORT int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
	return format(fp, flag < 0 ? 0 : flag, fmt, ap);
}

int __vprintf_chk(int flag, const char *fmt, va_list ap);
SFS_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	return format(stdout, flag < 0 ? 0 : flag, fmt, ap);
}

int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...);
SFS_EXPORT int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = format(fp, flag < 0 ? 0 : flag, fmt, ap);
	va_end(ap);
	return r;
}

int __printf_chk(int flag, const char *fmt, ...);
SFS_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = format(stdout, flag < 0 ? 0 : flag, fmt, ap);
	va_end(ap);
	return r;
}

/* The wide-character forms. */
SFS_EXPORT wint_t fputwc(wchar_t c, FILE *fp)
{
	return OUT(fp, true, 1, SFS_REAL(fputwc)(c, fp), WEOF);
}

SFS_EXPORT wint_t putwc(wchar_t c, FILE *fp)
{
	return OUT(fp, true, 1, SFS_REAL(fputwc)(c, fp), WEOF);
}

SFS_EXPORT wint_t putwchar(wchar_t c)
{
	return OUT(stdout, true, 1, SFS_REAL(fputwc)(c, stdout), WEOF);
}

SFS_EXPORT wint_t fputwc_unlocked(wchar_t c, FILE *fp)
{
	return OUT(fp, false, 1, SFS_REAL(fputwc_unlocked)(c, fp), WEOF);
}

SFS_EXPORT wint_t putwc_unlocked(wchar_t c, FILE *fp)
{
	return OUT(fp, false, 1, SFS_REAL(fputwc_unlocked)(c, fp), WEOF);
}

SFS_EXPORT wint_t putwchar_unlocked(wchar_t c)
{
	return OUT(stdout, false, 1, SFS_REAL(fputwc_unlocked)(c, stdout), WEOF);
}

SFS_EXPORT int fputws(const wchar_t *s, FILE *fp)
{
	return OUT(fp, true, wcslen(s), SFS_REAL(fputws)(s, fp), -1);
}

SFS_EXPORT int fputws_unlocked(const wchar_t *s, FILE *fp)
{
	return OUT(fp, false, wcslen(s), SFS_REAL(fputws_unlocked)(s, fp), -1);
}

static int real_wformat(FILE *fp, int flag, const wchar_t *fmt, va_list ap)
{
	return flag >= 0 ? SFS_REAL(__vfwprintf_chk)(fp, flag, fmt, ap) :
			   SFS_REAL(vfwprintf)(fp, fmt, ap);
}

/* As format: what a call added is its result, in wide characters. */
static int wformat(FILE *fp, int flag, const wchar_t *fmt, va_list ap)
{
	struct out o;
	if (sfs_likely(!out_begin(fp, &o, true)))
		return real_wformat(fp, flag, fmt, ap);
	int r = real_wformat(fp, flag, fmt, ap);
	return (int)out_end(&o, r >= 0 ? (size_t)r : SIZE_MAX, r, -1);
}

SFS_EXPORT int vfwprintf(FILE *fp, const wchar_t *fmt, va_list ap)
{
	return wformat(fp, -1, fmt, ap);
}

SFS_EXPORT int vwprintf(const wchar_t *fmt, va_list ap)
{
	return wformat(stdout, -1, fmt, ap);
}

SFS_EXPORT int fwprintf(FILE *fp, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = wformat(fp, -1, fmt, ap);
	va_end(ap);
	return r;
}

SFS_EXPORT int wprintf(const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = wformat(stdout, -1, fmt, ap);
	va_end(ap);
	return r;
}

SFS_EXPORT int __vfwprintf_chk(FILE *fp, int flag, const wchar_t *fmt, va_list ap)
{
	return wformat(fp, flag < 0 ? 0 : flag, fmt, ap);
}

int __vwprintf_chk(int flag, const wchar_t *fmt, va_list ap);
SFS_EXPORT int __vwprintf_chk(int flag, const wchar_t *fmt, va_list ap)
{
	return wformat(stdout, flag < 0 ? 0 : flag, fmt, ap);
}

int __fwprintf_chk(FILE *fp, int flag, const wchar_t *fmt, ...);
SFS_EXPORT int __fwprintf_chk(FILE *fp, int flag, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = wformat(fp, flag < 0 ? 0 : flag, fmt, ap);
	va_end(ap);
	return r;
}

int __wprintf_chk(int flag, const wchar_t *fmt, ...);
SFS_EXPORT int __wprintf_chk(int flag, const wchar_t *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = wformat(stdout, flag < 0 ? 0 : flag, fmt, ap);
	va_end(ap);
	return r;
}

void sfs_stdio_sent(FILE *fp)
{
	struct out o;
	if (sfs_likely(!out_begin(fp, &o, true)))
		return;
	(void)out_end(&o, SIZE_MAX, 0, 0); /* nobody to tell of a failed sync */
}

/* Whether a wrapped call left bytes of fd's stream buffered (hold). */
static bool held_by(int fd)
{
	if (fd >= HELD_FDS)
		return atomic_load_explicit(&held_far, memory_order_relaxed);
	return atomic_load_explicit(&held[fd / 64], memory_order_relaxed) >> (fd % 64) & 1;
}

/* stdout's or stderr's bytes an inline putchar_unlocked buffered, which
 * no wrapper saw: held too. */
static void hold_pending(FILE *fp)
{
	int fd = fp ? fileno_unlocked(fp) : -1;
	if (fd >= 0 && __fpending(fp) > 0)
		hold(fd);
}

void sfs_stdio_exit(void)
{
	if (!sfs_metasync_on())
		return;
	int saved = errno;
	hold_pending(stdout);
	hold_pending(stderr);
	bool any = atomic_load_explicit(&held_far, memory_order_relaxed);
	for (int w = 0; w < HELD_FDS / 64 && !any; w++)
		any = atomic_load_explicit(&held[w], memory_order_relaxed) != 0;
	if (any) {
		SFS_REAL(fflush)(NULL); /* glibc's _IO_cleanup, ahead of time */
		int limit = sfs_fd_limit();
		for (int fd = 0; fd < limit; fd++)
			if (held_by(fd) && sfs_stdio_syncs(fd))
				(void)SFS_REAL(fdatasync)(fd);
	}
	errno = saved;
}
