/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "helpers.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int t_failures;

bool t_under_splitfs(void)
{
	return dlsym(RTLD_DEFAULT, "splitfs_version") != NULL;
}

char *t_path(const char *dir, const char *name)
{
	static char buf[4][4096];
	static int i;
	char *p = buf[i++ % 4];
	snprintf(p, 4096, "%s/%s", dir, name);
	return p;
}

unsigned char t_byte(unsigned seed, long i)
{
	unsigned long x = (unsigned long)i * 2654435761u + seed * 40503u + 17;
	x ^= x >> 13;
	return (unsigned char)(x * 0x9E3779B1u >> 24);
}

void t_fill(unsigned char *buf, size_t n, unsigned seed, long start)
{
	for (size_t k = 0; k < n; k++)
		buf[k] = t_byte(seed, start + (long)k);
}

/* A system call no interposer can see (libc's syscall() is interposed). */
static long raw4(long nr, long a, long b, long c, long d)
{
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

long t_read_kernel(const char *path, unsigned char **buf)
{
	long fd = raw4(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct stat st;
	if (raw4(SYS_fstat, fd, (long)&st, 0, 0) != 0) {
		raw4(SYS_close, fd, 0, 0, 0);
		return -1;
	}
	*buf = malloc((size_t)st.st_size + 1);
	long got = 0;
	while (got < st.st_size) {
		long r = raw4(SYS_pread64, fd, (long)(*buf + got), st.st_size - got, got);
		if (r <= 0)
			break;
		got += r;
	}
	raw4(SYS_close, fd, 0, 0, 0);
	return got;
}

int t_result(void)
{
	if (t_failures)
		fprintf(stderr, "%d check(s) failed\n", t_failures);
	return t_failures ? T_EXIT_FAIL : T_EXIT_PASS;
}
