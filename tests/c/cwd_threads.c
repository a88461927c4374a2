/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the library never moves the working directory under the
 * application's threads. On DAX it loads libpmem2, whose pmem2_map_new
 * walks sysfs with fts(3), changing directory and back (util/pmem.c makes
 * its maps on a thread with a file system context of its own). Here one
 * thread checks getcwd() and opens a file by a relative path, over and
 * over, while the main thread does what makes the library map with
 * libpmem2: writes (sync and strict modes map their log at the first), an
 * fsync, then synced overwrites for a while (POSIX mode learns libpmem2's
 * primitives in the background from the first synced file). On a
 * page-cache file system libpmem2 is never loaded and the checks hold
 * trivially; the lab's suites run this on DAX. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

static char home[PATH_MAX];
static atomic_bool stop;
static long rounds, wrong_cwd, failed_opens;
static char first_wrong[PATH_MAX + 64];

static void *watch(void *unused)
{
	(void)unused;
	char cwd[PATH_MAX];
	while (!atomic_load(&stop)) {
		rounds++;
		if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, home) != 0) {
			if (wrong_cwd++ == 0)
				snprintf(first_wrong, sizeof(first_wrong), "getcwd: %s",
					 getcwd(cwd, sizeof(cwd)) ? cwd : strerror(errno));
			continue;
		}
		int fd = open("watch.dat", O_RDWR | O_CREAT, 0644);
		if (fd < 0) {
			if (failed_opens++ == 0 && wrong_cwd == 0)
				snprintf(first_wrong, sizeof(first_wrong), "open watch.dat: %s",
					 strerror(errno));
			continue;
		}
		close(fd);
	}
	return NULL;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc > 1 && chdir(argv[1]) == 0 && getcwd(home, sizeof(home)), "chdir %s",
		  argc > 1 ? argv[1] : "(no directory)");
	pthread_t t;
	T_REQUIRE(pthread_create(&t, NULL, watch, NULL) == 0, "pthread_create");
	unsigned char block[4096];
	t_fill(block, sizeof(block), 5, 0);
	int fd = open("data.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open data.dat");
	for (int i = 0; i < 64; i++)
		T_CHECK(write(fd, block, sizeof(block)) == (ssize_t)sizeof(block), "append %d", i);
	T_CHECK(fsync(fd) == 0, "fsync");
	/* Long enough for libpmem2 to load and map on the emulated CPU (tens of
	 * milliseconds there). */
	long writes = 0;
	for (double end = now() + 1.0; now() < end; writes++) {
		T_CHECK(pwrite(fd, block, sizeof(block), (writes % 64) * 4096) == sizeof(block),
			"overwrite %ld", writes);
		T_CHECK(fdatasync(fd) == 0, "fdatasync %ld", writes);
	}
	T_CHECK(close(fd) == 0, "close");
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	T_CHECK(rounds > 0, "the watcher never ran");
	T_CHECK(wrong_cwd == 0 && failed_opens == 0,
		"%ld of %ld rounds saw another working directory, %ld relative opens failed "
		"(first: %s)",
		wrong_cwd, rounds, failed_opens, first_wrong);
	printf("cwd_threads: %ld rounds, %ld synced overwrites\n", rounds, writes);
	return t_result();
}
