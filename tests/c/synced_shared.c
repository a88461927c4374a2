/* SPDX-License-Identifier: Apache-2.0 */
/* Description: small overwrites, each fsynced, of a file another process
 * of the library has open too. Such a file is not leased, so its
 * overwrites may be stores into a sharing session's mapping (fs/share.h);
 * but a store dirties a whole page-cache folio (up to 2 MiB), which the
 * next fsync writes back, where the kernel's pwrite dirties 1 KiB. A sync
 * decides, for a leased file or not, that a file synced after every small
 * write is written by the kernel (6343a16; before it, the VSM bench's
 * 1 KiB case wrote 39.5x the bytes). A child holds the file open; the
 * test, run again as a program of its own with the library's statistics
 * on, makes 200 synced 1 KiB overwrites at scattered offsets. The file
 * must hold them all (through the kernel), and in POSIX mode at most 8 of
 * them may have been stores (share_stores). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define FILE_BYTES (8L << 20)
#define OPS 200
#define LEN 1024

static unsigned char want[FILE_BYTES];

/* The offset of overwrite i: scattered, LEN-aligned. */
static long offset_of(int i)
{
	unsigned x = (unsigned)i * 2654435761u;
	return (long)((x >> 8) % (FILE_BYTES / LEN)) * LEN;
}

/* The writer, a program of its own: a child holds the file open while it
 * overwrites. */
static int writer(const char *path)
{
	int hold[2];
	T_REQUIRE(pipe(hold) == 0, "pipe");
	pid_t holder = fork();
	T_REQUIRE(holder >= 0, "fork");
	if (holder == 0) {
		int fd = open(path, O_RDWR);
		char c;
		close(hold[1]);
		ssize_t n = read(hold[0], &c, 1); /* until the writer is done */
		close(fd);
		_exit(fd >= 0 && n == 0 ? 0 : 1);
	}
	close(hold[0]);
	usleep(50000); /* the holder's open first */
	int fd = open(path, O_RDWR);
	T_REQUIRE(fd >= 0, "open");
	unsigned char buf[LEN];
	for (int i = 0; i < OPS; i++) {
		long off = offset_of(i);
		t_fill(buf, LEN, 77, (long)i * LEN);
		memcpy(want + off, buf, LEN);
		T_CHECK(pwrite(fd, buf, LEN, off) == LEN, "overwrite %d", i);
		T_CHECK(fsync(fd) == 0, "fsync %d", i);
	}
	close(fd);
	close(hold[1]);
	int st;
	T_CHECK(waitpid(holder, &st, 0) == holder && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		"the holder");
	return t_result();
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: synced_shared DIR");
	const char *dir = argv[1];
	char *path = strdup(t_path(dir, "synced_shared.dat"));
	t_fill(want, FILE_BYTES, 76, 0);
	if (argc == 3 && strcmp(argv[2], "--writer") == 0)
		return writer(path);
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	T_REQUIRE(fd >= 0, "create");
	T_REQUIRE(write(fd, want, FILE_BYTES) == FILE_BYTES, "write");
	T_REQUIRE(fsync(fd) == 0 && close(fd) == 0, "fsync");

	char *stats = strdup(t_path(dir, "synced_shared.stats"));
	unlink(stats);
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		setenv("SPLITFS_STATS", "1", 1);
		setenv("SPLITFS_STATS_FILE", stats, 1);
		execl("/proc/self/exe", argv[0], dir, "--writer", (char *)NULL);
		_exit(127);
	}
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the writer (status %#x)", st);

	/* The writer's overwrites, as the test computes them again here. */
	unsigned char buf[LEN];
	for (int i = 0; i < OPS; i++) {
		t_fill(buf, LEN, 77, (long)i * LEN);
		memcpy(want + offset_of(i), buf, LEN);
	}
	unsigned char *got = NULL;
	T_CHECK(t_read_kernel(path, &got) == FILE_BYTES && memcmp(got, want, FILE_BYTES) == 0,
		"the file through the kernel");
	free(got);

	const char *mode = getenv("SPLITFS_MODE");
	const char *share = getenv("SPLITFS_SHARE");
	if (t_under_splitfs() && (!mode || !*mode || strcmp(mode, "posix") == 0) &&
	    (!share || strcmp(share, "0") != 0)) {
		long stores = t_stat_event(stats, "share_stores");
		T_CHECK(stores <= 8, "%ld of %d synced overwrites were stores (statistics in %s)",
			stores, OPS, stats);
	}
	unlink(path);
	unlink(stats);
	free(path);
	free(stats);
	return t_result();
}
