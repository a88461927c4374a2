/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a log that syncs each record (a database's, Redis's
 * appendfsync always), through an O_APPEND descriptor: records of 100 B,
 * 4 KiB and 20 KiB, each followed by fdatasync; then a burst of 1 MiB of
 * records with no sync, then synced records again. After every append the
 * file's size (fstat) and the record read back (pread, through a second
 * descriptor) must be what was written; at the end the whole file. The
 * library serves such appends through the kernel once a sync finds a few
 * appended bytes (small_appends in src/fs/inode.h) and stages them again
 * after the burst: every switch is crossed.
 *   synced_log DIR [RECORDS]    default 200 (records per synced phase) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

static unsigned char *want; /* the log as written so far */
static size_t have;

/* Appends one record of n bytes (its bytes from seed), syncs it when
 * `sync`, and checks the size and the record through rd. */
static void append(int fd, int rd, size_t n, unsigned seed, bool sync)
{
	unsigned char *rec = want + have;
	t_fill(rec, n, seed, have);
	T_REQUIRE(write(fd, rec, n) == (ssize_t)n, "append of %zu at %zu", n, have);
	if (sync)
		T_REQUIRE(fdatasync(fd) == 0, "fdatasync at %zu", have);
	have += n;
	struct stat st;
	T_REQUIRE(fstat(fd, &st) == 0 && (size_t)st.st_size == have, "size %lld, want %zu",
		  (long long)st.st_size, have);
	unsigned char back[20480];
	T_REQUIRE(pread(rd, back, n, (off_t)(have - n)) == (ssize_t)n && memcmp(back, rec, n) == 0,
		  "the record at %zu read back", have - n);
}

/* The record sizes of a synced phase: mostly small, now and then one over
 * the library's threshold of appends between syncs. */
static size_t size_of(int i)
{
	return i % 17 == 16 ? 20480 : i % 3 == 0 ? 4096 : 100;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	int records = argc > 2 ? atoi(argv[2]) : 200;
	char *path = t_path(dir, "synced.log");
	want = malloc((size_t)records * 2 * 20480 + (1 << 20));
	T_REQUIRE(want, "malloc");
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	int rd = open(path, O_RDONLY);
	T_REQUIRE(fd >= 0 && rd >= 0, "open %s", path);

	for (int i = 0; i < records; i++)
		append(fd, rd, size_of(i), 1, true);
	for (int i = 0; i < 256; i++) /* the burst: 1 MiB, no sync */
		append(fd, rd, 4096, 2, false);
	T_REQUIRE(fdatasync(fd) == 0, "fdatasync after the burst");
	for (int i = 0; i < records; i++)
		append(fd, rd, size_of(i), 3, true);

	T_REQUIRE(close(fd) == 0 && close(rd) == 0, "close");
	unsigned char *got = NULL;
	long n = t_read_kernel(path, &got);
	T_CHECK(n == (long)have && memcmp(got, want, have) == 0,
		"the whole log as the kernel holds it: %ld bytes, want %zu", n, have);
	free(got);
	free(want);
	unlink(path);
	return t_result();
}
