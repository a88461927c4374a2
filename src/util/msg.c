/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "msg.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Warning sites that have spoken: a site is its format string, one per
 * call site. A warning's cause may repeat (a full table, a refused dup2):
 * the application's stderr hears of it once, the stats count the rest. */
#define MSG_WARN_SITES 64

static int msg_fd = 2;
static _Atomic(const char *) warned[MSG_WARN_SITES];

void sfs_msg_set_fd(int fd)
{
	msg_fd = fd;
}

/* The system call itself: this file is linked into the preload library,
 * where write() and syscall() are the library's own interposed symbols. */
static long raw_write(int fd, const char *buf, size_t len)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_write), "D"((long)fd), "S"(buf), "d"(len)
			 : "rcx", "r11", "memory");
	return ret;
}

void sfs_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		long n = raw_write(fd, buf, len);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		buf += n;
		len -= (size_t)n;
	}
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "splitfs: %s", prefix);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	size_t room = sizeof(line) - (size_t)n - 2;
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m > room ? room : (size_t)m);
	line[len++] = '\n';
	sfs_write_all(msg_fd, line, len);
}

void sfs_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

/* Whether the site of fmt has spoken already; claims it if not. With every
 * slot taken, further sites stay quiet. */
static bool warned_before(const char *fmt)
{
	for (int i = 0; i < MSG_WARN_SITES; i++) {
		const char *seen = atomic_load_explicit(&warned[i], memory_order_acquire);
		if (!seen && atomic_compare_exchange_strong(&warned[i], &seen, fmt))
			return false;
		if (seen == fmt)
			return true;
	}
	return true;
}

void sfs_warn(const char *fmt, ...)
{
	if (warned_before(fmt))
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void sfs_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
}
