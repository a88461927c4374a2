/* SPDX-License-Identifier: Apache-2.0 */
/* Description: sync and strict modes never switch themselves off (issue 13,
 * item 10). A process makes its operation log (its first write) while other
 * library processes start, each running recovery over .splitfs: the log
 * must be its own, locked, from the moment it has a name (before, another
 * process's recovery took it for a dead one's, and the writer went on
 * without durability). Each round, a fresh writer's first write and a
 * check that its log (log.<pid>.*) is there, with programs starting all
 * the while. Then no log can be made at all (.splitfs immutable): a strict
 * write fails (EIO) rather than be acknowledged without atomicity; a sync
 * write is made durable on its own. Skipped in POSIX mode and without the
 * library. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

extern char **environ;
static atomic_bool stop;

static void *starter(void *unused)
{
	(void)unused;
	char *t[] = {"/bin/true", NULL};
	while (!atomic_load(&stop)) {
		pid_t pid;
		if (posix_spawn(&pid, t[0], NULL, NULL, t, environ) == 0)
			waitpid(pid, NULL, 0);
	}
	return NULL;
}

/* Whether .splitfs holds this process's log. */
static bool has_log(const char *priv)
{
	char mine[32];
	int n = snprintf(mine, sizeof(mine), "log.%d.", (int)getpid());
	DIR *d = opendir(priv);
	bool found = false;
	struct dirent *e;
	while (d && !found && (e = readdir(d)) != NULL)
		found = strncmp(e->d_name, mine, (size_t)n) == 0;
	if (d)
		closedir(d);
	return found;
}

/* A write with no log to be had: 0 it succeeded (and reads back), 2 it
 * failed with EIO, 3 anything else. */
static int nolog_writer(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 3;
	ssize_t w = write(fd, "data", 4);
	int err = errno;
	close(fd);
	if (w == 4) {
		char got[4];
		fd = open(path, O_RDONLY);
		return fd >= 0 && read(fd, got, 4) == 4 && memcmp(got, "data", 4) == 0 ? 0 : 3;
	}
	return w < 0 && err == EIO ? 2 : 3;
}

/* Runs this program as argv2 with SPLITFS_LOG_SIZE=size (a size no free
 * log has: the log is made anew); returns its exit code or -1. */
static int spawn_with_size(char *const argv2[], int size)
{
	char env_size[64];
	snprintf(env_size, sizeof(env_size), "SPLITFS_LOG_SIZE=%d", size);
	char *env[256];
	int k = 0;
	for (char **e = environ; *e && k < 254; e++)
		if (strncmp(*e, "SPLITFS_LOG_SIZE=", 17) != 0)
			env[k++] = *e;
	env[k++] = env_size;
	env[k] = NULL;
	pid_t c;
	if (posix_spawn(&c, argv2[0], NULL, NULL, argv2, env) != 0)
		return -1;
	int st;
	waitpid(c, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The writer (a program of its own, so that its log size is its own:
 * no free log of that size exists, the log is made anew). */
static int writer(const char *path, const char *priv)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "first", 5) != 5)
		return 3;
	bool ok = has_log(priv);
	if (write(fd, "second", 6) != 6 || close(fd) != 0)
		return 3;
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--write") == 0)
		return writer(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "--nolog") == 0)
		return nolog_writer(argv[2]);
	const char *dir = argc > 1 ? argv[1] : ".";
	const char *mode = getenv("SPLITFS_MODE"), *mnt = getenv("SFS_MNT");
	if (!t_under_splitfs() || !mode || strcmp(mode, "posix") == 0 || !mnt) {
		printf("no operation log here (kernel, POSIX mode, or SFS_MNT unset)\n");
		return T_EXIT_SKIP;
	}
	char priv[4096];
	snprintf(priv, sizeof(priv), "%s/.splitfs", mnt);
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, starter, NULL);
	int lost = 0, rounds = t_scaled(20, 5); /* SFS_TEST_SCALE scales them */
	for (int round = 0; round < rounds; round++) {
		char name[32];
		snprintf(name, sizeof(name), "race.%d", round);
		char *argv2[] = {argv[0], "--write", t_path(dir, name), priv, NULL};
		int code = spawn_with_size(argv2, (16 << 20) + (getpid() % 97 + round + 1) * 65536);
		T_CHECK(code == 0 || code == 1, "round %d: a write failed (%d)", round, code);
		lost += code == 1;
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	T_CHECK(lost == 0,
		"in %d of %d rounds the writer had no log of its own after its first "
		"write (%s mode off)",
		lost, rounds, mode);

	/* No log can be made: .splitfs immutable (root only). */
	int dfd = open(priv, O_RDONLY | O_DIRECTORY);
	int flags = 0;
	if (dfd >= 0 && ioctl(dfd, FS_IOC_GETFLAGS, &flags) == 0) {
		int imm = flags | FS_IMMUTABLE_FL;
		if (ioctl(dfd, FS_IOC_SETFLAGS, &imm) == 0) {
			/* The file alone; then open in this process too (the
			 * writer gets no lease: its writes go the kernel's way). */
			int code[2];
			for (int shared = 0; shared < 2; shared++) {
				char *p = t_path(dir, shared ? "nolog.shared" : "nolog.dat");
				int hold = shared ? open(p, O_RDONLY | O_CREAT, 0644) : -1;
				char *argv3[] = {argv[0], "--nolog", p, NULL};
				code[shared] = spawn_with_size(
					argv3, (16 << 20) + (getpid() % 89 + 40 + shared) * 65536);
				if (hold >= 0)
					close(hold);
			}
			ioctl(dfd, FS_IOC_SETFLAGS, &flags);
			for (int shared = 0; shared < 2; shared++) {
				const char *how = shared ? "another process has the file open" :
							   "the file is this process's";
				if (strcmp(mode, "strict") == 0)
					T_CHECK(code[shared] == 2,
						"strict mode without a log (%s): the write must fail "
						"with EIO (got %d: 0 it succeeded)",
						how, code[shared]);
				else
					T_CHECK(code[shared] == 0,
						"sync mode without a log (%s): the write must succeed, "
						"durably (got %d)",
						how, code[shared]);
			}
		} else {
			printf("cannot make .splitfs immutable (%s): the no-log case is skipped\n",
			       strerror(errno));
		}
	}
	if (dfd >= 0)
		close(dfd);
	return t_result();
}
