/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the core data path on one file: appends, reads of staged
 * data, overwrites, O_APPEND, dup'd offsets, lseek(SEEK_END), fstat size,
 * truncate, fsync (then the kernel file holds every byte), reopen. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "helpers.h"

#define N (256 * 1024 + 123)

static unsigned char want[N + 8192], got[N + 8192];

static void check_file(const char *what, int fd, long size)
{
	struct stat st;
	T_CHECK(fstat(fd, &st) == 0 && st.st_size == size, "%s: fstat size %ld want %ld", what,
		(long)st.st_size, size);
	T_CHECK(lseek(fd, 0, SEEK_END) == size, "%s: SEEK_END", what);
	memset(got, 0, sizeof(got));
	T_CHECK(pread(fd, got, sizeof(got), 0) == size, "%s: pread size", what);
	T_CHECK(memcmp(got, want, (size_t)size) == 0, "%s: content", what);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char *p = t_path(dir, "basic.dat");
	unlink(p);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open %s", p);

	/* Appends of odd sizes, read back at once (staged data is visible). */
	long size = 0;
	for (int i = 0; size < N; i++) {
		size_t n = (size_t)(1 + (i * 7919) % 9000);
		if (size + (long)n > N)
			n = (size_t)(N - size);
		t_fill(want + size, n, 1, size);
		T_CHECK(write(fd, want + size, n) == (ssize_t)n, "append %d", i);
		size += (long)n;
	}
	check_file("after appends", fd, size);

	/* Overwrites across the old end and inside. */
	t_fill(want + 1000, 5000, 2, 1000);
	T_CHECK(pwrite(fd, want + 1000, 5000, 1000) == 5000, "overwrite head");
	t_fill(want + size - 3000, 6000, 3, size - 3000);
	T_CHECK(pwrite(fd, want + size - 3000, 6000, size - 3000) == 6000, "overwrite tail");
	size += 3000;
	check_file("after overwrites", fd, size);

	/* A hole past the end reads as zeros. */
	memset(want + size, 0, 4000);
	t_fill(want + size + 4000, 100, 4, size + 4000);
	T_CHECK(pwrite(fd, want + size + 4000, 100, size + 4000) == 100, "write past EOF");
	size += 4100;
	check_file("after hole", fd, size);

	/* fsync: the kernel file now holds everything. */
	T_CHECK(fsync(fd) == 0, "fsync");
	unsigned char *k;
	long ks = t_read_kernel(p, &k);
	T_CHECK(ks == size && memcmp(k, want, (size_t)size) == 0, "kernel view after fsync (%ld)",
		ks);
	free(k);

	/* dup shares the offset; O_APPEND writes at the end. */
	int fd2 = dup(fd);
	T_CHECK(lseek(fd, 10, SEEK_SET) == 10, "lseek");
	T_CHECK(lseek(fd2, 0, SEEK_CUR) == 10, "dup shares the offset");
	int afd = open(p, O_WRONLY | O_APPEND);
	t_fill(want + size, 777, 5, size);
	T_CHECK(write(afd, want + size, 777) == 777, "O_APPEND write");
	size += 777;
	T_CHECK(lseek(afd, 0, SEEK_CUR) == size, "O_APPEND offset at end");
	check_file("after O_APPEND", fd2, size);
	struct iovec iov[3] = {{want + size, 10}, {want + size + 10, 0}, {want + size + 10, 90}};
	t_fill(want + size, 100, 6, size);
	T_CHECK(writev(afd, iov, 3) == 100, "writev");
	size += 100;
	check_file("after writev", fd, size);

	/* Truncate down and up: the tail reads as zeros. */
	T_CHECK(ftruncate(fd, 5000) == 0, "ftruncate down");
	memset(want + 5000, 0, 3000);
	T_CHECK(ftruncate(fd, 8000) == 0, "ftruncate up");
	size = 8000;
	check_file("after truncates", fd, size);

	/* close, reopen, read through read(). */
	close(fd);
	close(fd2);
	close(afd);
	fd = open(p, O_RDONLY);
	T_REQUIRE(fd >= 0, "reopen");
	memset(got, 0, sizeof(got));
	long total = 0;
	ssize_t r;
	while ((r = read(fd, got + total, 1500)) > 0)
		total += r;
	T_CHECK(total == size && memcmp(got, want, (size_t)size) == 0, "read after reopen %ld",
		total);
	T_CHECK(write(fd, "x", 1) == -1 && errno == EBADF, "write on O_RDONLY");
	close(fd);
	unlink(p);
	return t_result();
}
