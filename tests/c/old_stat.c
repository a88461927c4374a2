/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a program built against glibc before 2.33 calls __xstat,
 * __lxstat, __fxstat, __fxstatat (and their 64 names) where a newer one
 * calls stat, lstat, fstat, fstatat: <sys/stat.h> made those inline
 * wrappers then, and glibc still exports the old names for such binaries
 * (manylinux wheels, older distributions' builds). They must show what
 * stat shows: a file's size with its staged appends, and the kernel's
 * EINVAL for a version it does not know. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "helpers.h"

/* glibc's, not declared by its headers since 2.33. */
int __xstat(int ver, const char *path, struct stat *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev);

#define STAT_VER 1 /* x86-64's _STAT_VER_LINUX */
#define APPENDS 64
#define RECLEN 100

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: old_stat DIR");
	char *path = t_path(argv[1], "f");
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	T_REQUIRE(fd >= 0, "open");
	unsigned char rec[RECLEN];
	/* More appends than a lease needs: under the library, staged. */
	for (int i = 0; i < APPENDS; i++) {
		t_fill(rec, RECLEN, 5, (long)i * RECLEN);
		T_REQUIRE(write(fd, rec, RECLEN) == RECLEN, "append %d", i);
	}
	const off_t want = (off_t)APPENDS * RECLEN;
	struct stat st;
	struct stat64 st64;
	T_CHECK(fstat(fd, &st) == 0 && st.st_size == want, "fstat: %lld bytes, want %lld",
		(long long)st.st_size, (long long)want);
	T_CHECK(__fxstat(STAT_VER, fd, &st) == 0 && st.st_size == want,
		"__fxstat: %lld bytes, want %lld", (long long)st.st_size, (long long)want);
	T_CHECK(__fxstat64(STAT_VER, fd, &st64) == 0 && st64.st_size == want,
		"__fxstat64: %lld bytes", (long long)st64.st_size);
	T_CHECK(__xstat(STAT_VER, path, &st) == 0 && st.st_size == want, "__xstat: %lld bytes",
		(long long)st.st_size);
	T_CHECK(__xstat64(STAT_VER, path, &st64) == 0 && st64.st_size == want,
		"__xstat64: %lld bytes", (long long)st64.st_size);
	T_CHECK(__lxstat(STAT_VER, path, &st) == 0 && st.st_size == want, "__lxstat: %lld bytes",
		(long long)st.st_size);
	T_CHECK(__fxstatat(STAT_VER, AT_FDCWD, path, &st, 0) == 0 && st.st_size == want,
		"__fxstatat: %lld bytes", (long long)st.st_size);
	/* A version the kernel's glibc does not know: EINVAL, as there. */
	errno = 0;
	T_CHECK(__fxstat(42, fd, &st) == -1 && errno == EINVAL, "__fxstat version 42: errno %d",
		errno);
	errno = 0;
	T_CHECK(__xstat(42, path, &st) == -1 && errno == EINVAL, "__xstat version 42: errno %d",
		errno);
	/* __xmknod: a FIFO, as mknod makes it; version 42 refused. */
	char *fifo = t_path(argv[1], "fifo");
	unlink(fifo);
	dev_t dev = 0;
	T_CHECK(__xmknod(0, fifo, S_IFIFO | 0600, &dev) == 0, "__xmknod: errno %d", errno);
	T_CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "__xmknod made no FIFO");
	errno = 0;
	T_CHECK(__xmknod(42, fifo, S_IFIFO | 0600, &dev) == -1 && errno == EINVAL,
		"__xmknod version 42: errno %d", errno);
	unlink(fifo);
	close(fd);
	return t_result();
}
