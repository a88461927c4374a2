/* SPDX-License-Identifier: Apache-2.0 */
/* Description: opens with O_DSYNC or O_SYNC, read-write and write-only, in
 * a child whose open makes the process's first inode of the file (as a
 * forked worker's does). In sync and strict modes the library manages
 * them; it must not write through an open file that has the flag (the
 * kernel cannot take it off one): every write would wait for the device
 * twice, the log's record and the checkpoint's (strict DWOL by a forked
 * worker ran at 0.44x the kernel's rate). The application still sees its
 * flags in F_GETFL, before and after the file goes back to the kernel
 * (flock), where its writes are then synchronous as it asked; and every
 * byte written is in the file. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define SIZE (64 << 10)
#define BLOCK 4096
#define WRITES 40 /* past the kernel calls before a lease (fs/lease.c) */

/* The flags of fd's kernel open file, from /proc (not F_GETFL, which the
 * library answers from the application's open). */
static long kernel_flags(int fd)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(path, "r");
	long flags = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "flags: %lo", &flags) == 1)
			break;
	if (f)
		fclose(f);
	return flags;
}

static int child(const char *path, int acc, int sync, bool managed)
{
	int fd = open(path, acc | sync);
	T_REQUIRE(fd >= 0, "open");
	unsigned char b[BLOCK];
	for (int i = 0; i < WRITES; i++) {
		t_fill(b, sizeof(b), (unsigned)(acc + sync), (long)i * BLOCK);
		T_CHECK(pwrite(fd, b, BLOCK, (off_t)(i % (SIZE / BLOCK)) * BLOCK) == BLOCK,
			"write %d", i);
	}
	int want = acc | sync;
	int fl = fcntl(fd, F_GETFL);
	T_CHECK((fl & (O_ACCMODE | O_SYNC | O_DSYNC)) == want, "F_GETFL %#o, opened %#o", fl, want);
	if (managed)
		T_CHECK(!(kernel_flags(fd) & O_DSYNC),
			"the open file the library writes through is synchronous (%#lo)",
			kernel_flags(fd));
	/* flock: the file goes back to the kernel (interpose/fd.c). */
	T_CHECK(flock(fd, LOCK_SH) == 0, "flock");
	fl = fcntl(fd, F_GETFL);
	T_CHECK((fl & (O_ACCMODE | O_SYNC | O_DSYNC)) == want, "F_GETFL %#o after flock", fl);
	T_CHECK((kernel_flags(fd) & (O_SYNC | O_DSYNC)) == sync,
		"the kernel's open file after flock: %#lo, opened %#o", kernel_flags(fd), want);
	t_fill(b, sizeof(b), (unsigned)(acc + sync), (long)WRITES * BLOCK);
	T_CHECK(pwrite(fd, b, BLOCK, SIZE - BLOCK) == BLOCK, "write after flock");
	T_CHECK(close(fd) == 0, "close");
	return t_result();
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	const char *mode = getenv("SPLITFS_MODE");
	/* POSIX mode leaves such opens to the kernel (fs/fileops.c). */
	bool managed = t_under_splitfs() && mode && strcmp(mode, "posix") != 0;
	const int accs[] = {O_RDWR, O_WRONLY}, syncs[] = {O_DSYNC, O_SYNC};
	char *path = t_path(dir, "sync_opens.dat");
	for (int a = 0; a < 2; a++)
		for (int s = 0; s < 2; s++) {
			int acc = accs[a], sync = syncs[s];
			unsigned char *zero = calloc(1, SIZE);
			int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			T_REQUIRE(fd >= 0 && write(fd, zero, SIZE) == SIZE && close(fd) == 0,
				  "the file");
			free(zero);
			pid_t c = fork();
			T_REQUIRE(c >= 0, "fork");
			if (c == 0)
				_exit(child(path, acc, sync, managed));
			int st;
			T_REQUIRE(waitpid(c, &st, 0) == c, "wait");
			T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s|%s: the child failed",
				acc == O_RDWR ? "O_RDWR" : "O_WRONLY",
				sync == O_SYNC ? "O_SYNC" : "O_DSYNC");
			/* Each block holds its last write. */
			unsigned char *got, want[BLOCK];
			long n = t_read_kernel(path, &got);
			T_REQUIRE(n == SIZE, "size %ld", n);
			for (int i = WRITES - SIZE / BLOCK; i < WRITES; i++) {
				long at = (long)(i % (SIZE / BLOCK)) * BLOCK;
				long from =
					at == SIZE - BLOCK ? (long)WRITES * BLOCK : (long)i * BLOCK;
				t_fill(want, BLOCK, (unsigned)(acc + sync), from);
				T_CHECK(memcmp(got + at, want, BLOCK) == 0, "block at %ld", at);
			}
			free(got);
		}
	return t_result();
}
