/* SPDX-License-Identifier: Apache-2.0 */
/* Description: threads overwriting disjoint blocks of one file in sync
 * and strict modes. In sync mode a file the log holds no record of
 * (fsynced) is overwritten with the kernel's own durable write; in strict
 * mode a file bound in the log has its records written and applied
 * (fs/logged.c). Neither needs the inode lock: under the locks of their
 * stripes only, threads wait for the device at once instead of one after
 * another (FxMark DWOM on the 16-core device, 4 threads: 0.35x the
 * kernel's rate in sync mode, 0.33x in strict; 16 threads: 0.16x, 0.15x).
 * A child (this program again, "child DIR") runs the threads with
 * statistics on: some of its writes must have gone without the lock
 * (dsync_unlocked, logged_unlocked; not on DAX, where a record is stores
 * and such writes keep the lock); in every mode, every block holds the
 * last write of its thread. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define THREADS 4
#define BLOCK 4096
#define BLOCKS 16  /* per thread */
#define ROUNDS 100 /* writes of each block */

extern char **environ;

static int fd;

static void *writer(void *arg)
{
	long k = (long)(intptr_t)arg;
	unsigned char b[BLOCK];
	for (int r = 0; r < ROUNDS; r++)
		for (long i = 0; i < BLOCKS; i++) {
			long at = (k * BLOCKS + i) * BLOCK;
			t_fill(b, BLOCK, (unsigned)r, at);
			if (pwrite(fd, b, BLOCK, at) != BLOCK)
				return (void *)1;
		}
	return NULL;
}

static int child(const char *dir)
{
	fd = open(t_path(dir, "stripes.dat"), O_RDWR);
	if (fd < 0)
		return 3;
	pthread_t t[THREADS];
	for (long k = 0; k < THREADS; k++)
		if (pthread_create(&t[k], NULL, writer, (void *)(intptr_t)k) != 0)
			return 4;
	int bad = 0;
	for (int k = 0; k < THREADS; k++) {
		void *r;
		pthread_join(t[k], &r);
		bad += r != NULL;
	}
	return bad || close(fd) != 0 ? 5 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "child") == 0)
		return child(argv[2]);
	const char *dir = argc > 1 ? argv[1] : ".";
	const char *mode = getenv("SPLITFS_MODE");
	long size = (long)THREADS * BLOCKS * BLOCK;
	/* The file, written and fsynced: no record of it is live. */
	unsigned char *zero = calloc(1, (size_t)size);
	int w = open(t_path(dir, "stripes.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(w >= 0 && write(w, zero, (size_t)size) == size && fsync(w) == 0 && close(w) == 0,
		  "the file");
	free(zero);
	char stats[PATH_MAX];
	snprintf(stats, sizeof(stats), "%s/stripes.stats", dir);
	unlink(stats);
	setenv("SPLITFS_STATS", "1", 1);
	setenv("SPLITFS_STATS_FILE", stats, 1);
	char *args[] = {"/proc/self/exe", "child", (char *)dir, NULL};
	pid_t pid;
	T_REQUIRE(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) == 0, "spawn");
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the child's threads wrote (status 0x%x)", st);
	unsigned char *data, want[BLOCK];
	long n = t_read_kernel(t_path(dir, "stripes.dat"), &data);
	T_REQUIRE(n == size, "size %ld", n);
	for (long at = 0; at < size; at += BLOCK) {
		t_fill(want, BLOCK, ROUNDS - 1, at);
		T_CHECK(memcmp(data + at, want, BLOCK) == 0, "block at %ld: not its last write",
			at);
	}
	free(data);
	/* Not on DAX: the log is stores there, and every durable write takes
	 * the locked path (fs/logged.c). */
	if (t_under_splitfs() && mode && strcmp(mode, "posix") != 0 &&
	    !t_on_dax(t_path(dir, "stripes.dat"))) {
		bool sync = strcmp(mode, "sync") == 0;
		long unlocked = t_stat_event(stats, sync ? "dsync_unlocked" : "logged_unlocked");
		T_CHECK(unlocked > 0, "%s mode: no overwrite went without the inode lock (%ld)",
			mode, unlocked);
	}
	return t_result();
}
