/* SPDX-License-Identifier: Apache-2.0 */
/* Description: threads of one process writing durably at once (sync and
 * strict modes log every write) spread their records over lanes of the
 * process's log set (src/oplog/lanes.h), and a clean exit gives the whole
 * set back. A child (this program again, "child DIR") runs 8 threads, each
 * writing 300 4 KiB blocks of its own file with pwrite, all started
 * together; its statistics (SPLITFS_STATS_FILE) count the lanes it opened.
 * The parent checks every file, block by block, through the raw system
 * call, and that no log or lane of the child's keeps its name in .splitfs.
 * In sync and strict modes at least one run of 5 must have opened a lane
 * (8 threads that never once write at the same moment, 5 times over, are
 * not a schedule a machine produces). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define THREADS 8
#define BLOCKS 300
#define BLOCK 4096
#define RUNS 5

extern char **environ;

static const char *g_dir;
static pthread_barrier_t g_start;

static void *writer(void *arg)
{
	int k = (int)(long)arg;
	char path[PATH_MAX]; /* not t_path: its buffer is one for all threads */
	snprintf(path, sizeof(path), "%s/lanes.%d", g_dir, k);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(3);
	unsigned char buf[BLOCK];
	pthread_barrier_wait(&g_start);
	for (long b = 0; b < BLOCKS; b++) {
		t_fill(buf, BLOCK, 100 + (unsigned)k, b * BLOCK);
		if (pwrite(fd, buf, BLOCK, b * BLOCK) != BLOCK)
			_exit(4);
	}
	if (close(fd) != 0)
		_exit(5);
	return NULL;
}

static int child(const char *dir)
{
	g_dir = dir;
	pthread_t t[THREADS];
	pthread_barrier_init(&g_start, NULL, THREADS);
	for (long k = 0; k < THREADS; k++)
		if (pthread_create(&t[k], NULL, writer, (void *)k) != 0)
			return 3;
	for (int k = 0; k < THREADS; k++)
		pthread_join(t[k], NULL);
	return 0; /* exit(): the library gives its log set back */
}

/* Names in root/.splitfs that belong to pid's log set. */
static int names_of(const char *root, pid_t pid)
{
	char dir[PATH_MAX], log[32], lane[32];
	snprintf(dir, sizeof(dir), "%s/.splitfs", root);
	snprintf(log, sizeof(log), "log.%d.", (int)pid);
	snprintf(lane, sizeof(lane), "lane.%d.", (int)pid);
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += strncmp(e->d_name, log, strlen(log)) == 0 ||
		     strncmp(e->d_name, lane, strlen(lane)) == 0;
	if (d)
		closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "child") == 0)
		return child(argv[2]);
	const char *dir = argc > 1 ? argv[1] : ".";
	const char *mode = getenv("SPLITFS_MODE");
	const char *root = getenv("SPLITFS_ROOT");
	bool logged = t_under_splitfs() && mode &&
		      (strcmp(mode, "sync") == 0 || strcmp(mode, "strict") == 0);
	char stats[PATH_MAX];
	snprintf(stats, sizeof(stats), "%s/lanes.stats", dir);
	long lanes = 0;
	for (int run = 0; run < RUNS && (run == 0 || (logged && lanes <= 0)); run++) {
		setenv("SPLITFS_STATS", "1", 1);
		setenv("SPLITFS_STATS_FILE", stats, 1);
		char *args[] = {"/proc/self/exe", "child", (char *)dir, NULL};
		pid_t pid;
		T_REQUIRE(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) == 0,
			  "spawn the child");
		int st;
		T_REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "the child's threads wrote (status 0x%x)", st);
		for (int k = 0; k < THREADS; k++) {
			char name[32];
			snprintf(name, sizeof(name), "lanes.%d", k);
			unsigned char *data, want[BLOCK];
			long size = t_read_kernel(t_path(dir, name), &data);
			T_REQUIRE(size == (long)BLOCKS * BLOCK, "%s: %ld bytes", name, size);
			for (long b = 0; b < BLOCKS; b++) {
				t_fill(want, BLOCK, 100 + (unsigned)k, b * BLOCK);
				T_REQUIRE(memcmp(data + b * BLOCK, want, BLOCK) == 0,
					  "%s: block %ld is not what thread %d wrote", name, b, k);
			}
			free(data);
		}
		if (root)
			T_CHECK(names_of(root, pid) == 0,
				"the child exited cleanly, yet %d of its log files keep their names",
				names_of(root, pid));
		lanes = t_stat_event(stats, "log_lanes");
	}
	if (logged)
		T_CHECK(lanes > 0, "%s mode: 8 threads writing at once opened no lane in %d runs",
			mode, RUNS);
	return t_result();
}
