/* SPDX-License-Identifier: Apache-2.0 */
/* Description: descriptors survive execve with their offsets and flags:
 * the parent stages appends through fd A (no fsync), moves the offset of fd
 * B, marks fd C close-on-exec, then execs itself; the new image (which
 * starts its own library) must read every staged byte through A, find B's
 * offset where it was left, append through A with O_APPEND at the right end,
 * and find C closed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

#define N 100000

static unsigned char want[N + 100];

static int child(int a, int b, int c)
{
	struct stat st;
	T_CHECK(fstat(a, &st) == 0 && st.st_size == N, "size after exec %ld", (long)st.st_size);
	static unsigned char got[N];
	T_CHECK(pread(a, got, N, 0) == N && memcmp(got, want, N) == 0, "staged bytes after exec");
	T_CHECK(lseek(b, 0, SEEK_CUR) == 12345, "offset of B after exec");
	T_CHECK(lseek(a, 0, SEEK_CUR) == N, "offset of A after exec");
	T_CHECK(fcntl(c, F_GETFD) == -1 && errno == EBADF, "O_CLOEXEC descriptor closed");
	T_CHECK(write(a, want + N, 100) == 100, "append after exec");
	T_CHECK(fstat(a, &st) == 0 && st.st_size == N + 100, "size after append");
	return t_result();
}

int main(int argc, char **argv)
{
	t_fill(want, sizeof(want), 9, 0);
	if (argc == 5 && strcmp(argv[1], "--child") == 0)
		return child(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	const char *dir = argc > 1 ? argv[1] : ".";
	char *path = t_path(dir, "exec.dat");
	unlink(path);
	int a = open(path, O_RDWR | O_CREAT | O_APPEND, 0644);
	int b = open(path, O_RDONLY);
	int c = open(path, O_RDONLY | O_CLOEXEC);
	T_REQUIRE(a >= 0 && b >= 0 && c >= 0, "open");
	for (long off = 0; off < N; off += 1000)
		T_REQUIRE(write(a, want + off, 1000) == 1000, "write");
	T_REQUIRE(lseek(b, 12345, SEEK_SET) == 12345, "lseek");
	char fa[16], fb[16], fc[16];
	snprintf(fa, sizeof(fa), "%d", a);
	snprintf(fb, sizeof(fb), "%d", b);
	snprintf(fc, sizeof(fc), "%d", c);
	execl("/proc/self/exe", argv[0], "--child", fa, fb, fc, (char *)NULL);
	T_CHECK(0, "execl");
	return t_result();
}
