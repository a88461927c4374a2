/* SPDX-License-Identifier: Apache-2.0 */
/* Description: every way out of a process leaves what its write() calls
 * returned for in its files, as the kernel's page cache does (issue 13,
 * item 1): _exit, _Exit, syscall(SYS_exit_group), the last thread's
 * pthread_exit, a failed execve then _exit, a vfork child's _exit, a
 * subshell of a real shell (dash exits its forked subshells with _exit).
 * A child writes, leaves; the parent reads the file with raw system calls
 * (what a program without the library sees). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define NREC 64
#define RECLEN 100

extern char **environ;

enum way { EXIT_, EXIT_C, EXIT_GROUP, LAST_THREAD, EXEC_FAILED, VFORK, NWAYS };
static const char *const names[] = {"_exit",	    "_Exit",	     "exit_group",
				    "pthread_exit", "failed execve", "vfork child"};

static const char *g_path;

static int write_records(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(3);
	unsigned char buf[RECLEN];
	for (int i = 0; i < NREC; i++) {
		t_fill(buf, RECLEN, 11, (long)i * RECLEN);
		if (write(fd, buf, RECLEN) != RECLEN)
			_exit(3);
	}
	/* No close, no fsync: the process leaves with the file open. */
	return fd;
}

/* Waits (up to 5 s) until the main thread has ended: a zombie, or gone. A
 * process whose main thread ended has no /proc/self/fd (the library used
 * to make its log through it, and lost the writes). */
static void wait_main_gone(void)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)getpid(), (int)getpid());
	for (int i = 0; i < 500; i++) {
		char buf[256] = "";
		FILE *f = fopen(path, "r");
		if (!f)
			return;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		const char *st = strrchr(buf, ')');
		if (st && (st[2] == 'Z' || st[2] == 'X'))
			return;
		usleep(10000);
	}
}

/* Free logs in <root>/.splitfs (SPLITFS_ROOT) go: a sync or strict process
 * then makes its log anew, through /proc, after its main thread ended. */
static void drop_free_logs(void)
{
	const char *root = getenv("SPLITFS_ROOT");
	char dir[PATH_MAX];
	if (!root || snprintf(dir, sizeof(dir), "%s/.splitfs", root) >= (int)sizeof(dir))
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "log.free.", 9) == 0)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

static void *thread_writes(void *arg)
{
	(void)arg;
	wait_main_gone();
	int fd = write_records(g_path);
	/* The records in place, then an overwrite (the same bytes), which
	 * sync and strict modes log: the log is made here. */
	unsigned char buf[RECLEN];
	t_fill(buf, RECLEN, 11, 0);
	if (fsync(fd) != 0 || pwrite(fd, buf, RECLEN, 0) != RECLEN)
		_exit(3);
	pthread_exit(NULL); /* the last thread: the process ends here */
}

static void leave(enum way w, const char *path)
{
	switch (w) {
	case EXIT_:
		write_records(path);
		_exit(0);
	case EXIT_C:
		write_records(path);
		_Exit(0);
	case EXIT_GROUP:
		write_records(path);
		syscall(SYS_exit_group, 0);
		_exit(4);
	case LAST_THREAD: {
		drop_free_logs();
		g_path = path;
		pthread_t t;
		if (pthread_create(&t, NULL, thread_writes, NULL) != 0)
			_exit(3);
		pthread_exit(NULL); /* the main thread first */
	}
	case EXEC_FAILED: {
		write_records(path);
		char *argv[] = {"/nonexistent/splitfs-test", NULL};
		execve(argv[0], argv, environ);
		_exit(0);
	}
	case VFORK: {
		pid_t c = vfork();
		if (c == 0) {
			write_records(path);
			_exit(0);
		}
		int st;
		waitpid(c, &st, 0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 5);
	}
	default:
		_exit(6);
	}
}

static void check_file(const char *path, const char *how)
{
	unsigned char *got;
	long n = t_read_kernel(path, &got);
	unsigned char want[NREC * RECLEN];
	t_fill(want, sizeof(want), 11, 0);
	T_CHECK(n == (long)sizeof(want) && memcmp(got, want, sizeof(want)) == 0,
		"%s: the file holds %ld of %zu bytes written", how, n, sizeof(want));
	if (n >= 0)
		free(got);
}

/* dash -c '( echo hello ) > f': the subshell forks and leaves with _exit. */
static void subshell(const char *dir)
{
	char *f = t_path(dir, "subshell.out");
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "( echo hello; echo world ) > '%s'", f);
	char *argv[] = {"dash", "-c", cmd, NULL};
	pid_t pid;
	if (posix_spawnp(&pid, "dash", NULL, NULL, argv, environ) != 0) {
		fprintf(stderr, "no dash: subshell case skipped\n");
		return;
	}
	int st;
	waitpid(pid, &st, 0);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "dash exited %d", st);
	unsigned char *got;
	long n = t_read_kernel(f, &got);
	T_CHECK(n == 12 && memcmp(got, "hello\nworld\n", 12) == 0,
		"a subshell's output: %ld bytes, want 12", n);
	if (n >= 0)
		free(got);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	for (int w = 0; w < NWAYS; w++) {
		char name[64];
		snprintf(name, sizeof(name), "exit.%d", w);
		char *path = t_path(dir, name);
		pid_t c = fork();
		T_REQUIRE(c >= 0, "fork");
		if (c == 0)
			leave((enum way)w, path);
		int st;
		T_REQUIRE(waitpid(c, &st, 0) == c, "wait");
		T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child status %d", names[w], st);
		check_file(path, names[w]);
	}
	subshell(dir);
	return t_result();
}
