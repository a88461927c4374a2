/* SPDX-License-Identifier: Apache-2.0 */
/* Description: dd's way with files: it opens its input and output and
 * dup2s them onto 0 and 1 (coreutils fd_reopen), as a shell's `< in > out`
 * does, then reads and writes those numbers. A child (this program again,
 * "child DIR SIZE") copies in to out so, in SIZE blocks; its statistics
 * (SPLITFS_STATS_FILE) say whether the library managed the duplicated
 * input (pending_promoted: until a pending descriptor's dup was managed
 * first, fs/fdtable.h, a duplicated one stayed the kernel's for good) and
 * left the output, a writer, to the kernel (a shell's builtins write a
 * redirected stdout through stdio, which the library does not see). Then:
 * out is in, byte for byte, in each block size (4 KiB, 1 MiB); and a
 * descriptor's dup and the original share one offset, reads through either
 * moving it for both, also once the kernel takes the file back. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <sys/file.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define SIZE (8L << 20)

extern char **environ;

/* dd: in onto 0, out onto 1, then a copy in blocks of bs. */
static int child(const char *dir, long bs)
{
	char in[PATH_MAX], out[PATH_MAX];
	snprintf(in, sizeof(in), "%s/dup.in", dir);
	snprintf(out, sizeof(out), "%s/dup.out.%ld", dir, bs);
	int i = open(in, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (i < 0 || o < 0 || dup2(i, 0) != 0 || dup2(o, 1) != 1 || close(i) || close(o))
		return 3;
	char *buf = malloc((size_t)bs);
	for (;;) {
		ssize_t n = read(0, buf, (size_t)bs);
		if (n < 0)
			return 4;
		if (n == 0)
			break;
		if (write(1, buf, (size_t)n) != n)
			return 5;
	}
	return fsync(1) == 0 && close(1) == 0 ? 0 : 6;
}

static void copy_as_dd(const char *dir, long bs)
{
	char stats[PATH_MAX], bsarg[32];
	snprintf(stats, sizeof(stats), "%s/dup.stats.%ld", dir, bs);
	snprintf(bsarg, sizeof(bsarg), "%ld", bs);
	setenv("SPLITFS_STATS", "1", 1);
	setenv("SPLITFS_STATS_FILE", stats, 1);
	char *args[] = {"/proc/self/exe", "child", (char *)dir, bsarg, NULL};
	pid_t pid;
	T_REQUIRE(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) == 0, "spawn");
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "bs %ld: the copy failed (status 0x%x)", bs, st);
	unsigned char *a, *b;
	long na = t_read_kernel(t_path(dir, "dup.in"), &a);
	char out[32];
	snprintf(out, sizeof(out), "dup.out.%ld", bs);
	long nb = t_read_kernel(t_path(dir, out), &b);
	T_CHECK(na == SIZE && nb == na && memcmp(a, b, (size_t)na) == 0,
		"bs %ld: the copy differs (%ld bytes of %ld)", bs, nb, na);
	free(a);
	free(b);
	if (!t_under_splitfs())
		return;
	/* The input was promoted at its dup; the output, a writer, was not
	 * (in sync and strict modes it was never pending): its writes may come
	 * through stdio, which the library does not see (unseen_writes.c). */
	long promoted = t_stat_event(stats, "pending_promoted");
	T_CHECK(promoted == 1, "bs %ld: %ld descriptors promoted, not the input alone", bs,
		promoted);
}

/* A descriptor and its dup share one offset, as the kernel's open file
 * does. A writer of the file is open too: managing the file, the library
 * points its read-write descriptors at one open file of its own
 * (fs/openfile.c), which the dup must share, or the kernel's offset of the
 * dup's stays behind when the file goes back to the kernel. */
static void shared_offset(const char *dir)
{
	int fd = open(t_path(dir, "dup.in"), O_RDWR);
	int w = open(t_path(dir, "dup.in"), O_WRONLY);
	T_REQUIRE(fd >= 0 && w >= 0, "open");
	unsigned char b[4096], want[4096];
	T_CHECK(read(fd, b, sizeof(b)) == (ssize_t)sizeof(b), "first read");
	int d = dup(fd);
	T_REQUIRE(d >= 0, "dup");
	for (long k = 1; k < 64; k++) {
		int from = k % 2 ? d : fd;
		T_CHECK(read(from, b, sizeof(b)) == (ssize_t)sizeof(b), "read %ld", k);
		t_fill(want, sizeof(want), 7, k * 4096);
		T_CHECK(memcmp(b, want, sizeof(b)) == 0, "read %ld (fd %d): not block %ld", k, from,
			k);
		T_CHECK(lseek(fd, 0, SEEK_CUR) == (k + 1) * 4096 &&
				lseek(d, 0, SEEK_CUR) == (k + 1) * 4096,
			"offsets after read %ld", k);
	}
	T_CHECK(lseek(d, 0, SEEK_SET) == 0 && read(fd, b, sizeof(b)) == (ssize_t)sizeof(b),
		"rewind");
	t_fill(want, sizeof(want), 7, 0);
	T_CHECK(memcmp(b, want, sizeof(b)) == 0, "the dup's lseek moved the original's offset");
	/* flock leaves the file to the kernel (interpose/fd.c): the offset
	 * the library kept goes back into the one open file both share. */
	T_CHECK(lseek(fd, 5 * 4096, SEEK_SET) == 5 * 4096 && flock(d, LOCK_SH) == 0, "flock");
	T_CHECK(lseek(fd, 0, SEEK_CUR) == 5 * 4096 && lseek(d, 0, SEEK_CUR) == 5 * 4096,
		"offsets after the kernel took the file back: %ld and %ld",
		(long)lseek(fd, 0, SEEK_CUR), (long)lseek(d, 0, SEEK_CUR));
	close(d);
	close(fd);
	close(w);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "child") == 0)
		return child(argv[2], atol(argv[3]));
	const char *dir = argc > 1 ? argv[1] : ".";
	/* The input, written by a child: this process has never had it, so
	 * its opens of it start pending. */
	pid_t c = fork();
	T_REQUIRE(c >= 0, "fork");
	if (c == 0) {
		int fd = open(t_path(dir, "dup.in"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		unsigned char *buf = malloc(SIZE);
		t_fill(buf, SIZE, 7, 0);
		_exit(fd >= 0 && write(fd, buf, SIZE) == SIZE && close(fd) == 0 ? 0 : 1);
	}
	int st;
	T_REQUIRE(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the input");
	copy_as_dd(dir, 4096);
	copy_as_dd(dir, 1L << 20);
	shared_offset(dir);
	return t_result();
}
