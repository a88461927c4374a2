/* SPDX-License-Identifier: Apache-2.0 */
/* Description: one process appending to many files in turn stages the
 * appends of every file, not only of the first. A staging store is an
 * O_TMPFILE linked into .splitfs by its target's name while it holds a
 * window; the kernel lets such a file be linked once only, so a store
 * whose name was unlinked after its first file could never be bound again,
 * and from the second file on every append went the kernel's way (with a
 * failed bind per write). Stores now keep a name of their own between
 * files (idle.*), which the process removes however it leaves (exit,
 * _exit, exec, a fatal signal) and the next process of the user removes
 * when the owner was killed.
 * Under the library the test runs itself four times: appending with
 * statistics on (every file staged, no fallback, no idle name left after
 * exit), appending and leaving by _exit (no idle name left), appending
 * and then killed by SIGKILL, and a stat of the directory alone (its start
 * on the root must remove the killed one's idle names). On the kernel it
 * checks the files' contents only. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define NFILES 12
#define WRITES 32 /* well past the operations before a POSIX-mode lease */
#define RECLEN 4096

static void append_files(const char *dir)
{
	unsigned char buf[RECLEN];
	for (int i = 0; i < NFILES; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%02d", i);
		int fd = open(t_path(dir, name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		T_REQUIRE(fd >= 0, "open %s", name);
		for (int w = 0; w < WRITES; w++) {
			t_fill(buf, RECLEN, (unsigned)i, (long)w * RECLEN);
			T_CHECK(write(fd, buf, RECLEN) == RECLEN, "write %s.%d", name, w);
		}
		T_CHECK(close(fd) == 0, "close %s", name);
	}
}

static void check_files(const char *dir)
{
	long want = (long)WRITES * RECLEN;
	unsigned char *exp = malloc((size_t)want);
	T_REQUIRE(exp, "malloc");
	for (int i = 0; i < NFILES; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%02d", i);
		unsigned char *got = NULL;
		long n = t_read_kernel(t_path(dir, name), &got);
		t_fill(exp, (size_t)want, (unsigned)i, 0);
		T_CHECK(n == want && memcmp(got, exp, (size_t)want) == 0,
			"%s: %ld bytes or contents differ", name, n);
		free(got);
	}
	free(exp);
}

/* Names idle.<uid>.* in the library's private directory. */
static int idle_names(void)
{
	const char *root = getenv("SPLITFS_ROOT");
	T_REQUIRE(root, "SPLITFS_ROOT is not set");
	char priv[4096], prefix[32];
	snprintf(priv, sizeof(priv), "%s/.splitfs", root);
	snprintf(prefix, sizeof(prefix), "idle.%u.", (unsigned)geteuid());
	DIR *d = opendir(priv);
	T_REQUIRE(d, "opendir %s", priv);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

/* Runs this program again with role in MANY_STORES_ROLE, and statistics
 * into stats when not NULL; its wait status. */
static int run_self(const char *dir, const char *role, const char *stats)
{
	const char *env[] = {"MANY_STORES_ROLE",
			     role,
			     "SPLITFS_STATS",
			     stats ? "1" : NULL,
			     "SPLITFS_STATS_FILE",
			     stats,
			     NULL};
	return t_run_self(dir, env, NULL);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: many_stores DIR");
	const char *dir = argv[1];
	const char *role = getenv("MANY_STORES_ROLE");
	if (role && strcmp(role, "append") == 0) {
		append_files(dir);
		return t_result();
	}
	if (role && strcmp(role, "exited") == 0) {
		append_files(dir);
		_exit(t_failures ? T_EXIT_FAIL : T_EXIT_PASS);
	}
	if (role && strcmp(role, "killed") == 0) {
		append_files(dir);
		raise(SIGKILL);
	}
	if (role) { /* "start": the library's start on its root is the test */
		struct stat st;
		T_CHECK(stat(dir, &st) == 0, "stat"); /* POSIX mode starts at a path */
		return t_result();
	}
	if (!t_under_splitfs()) {
		append_files(dir);
		check_files(dir);
		return t_result();
	}
	char *stats = strdup(t_path(dir, "stats"));
	unlink(stats);
	int st = run_self(dir, "append", stats);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the appender failed (status %#x)", st);
	check_files(dir);
	const char *mode = getenv("SPLITFS_MODE");
	long windows = t_stat_event(stats, "staging_windows");
	long fallbacks = t_stat_event(stats, "kernel_fallbacks");
	if (!mode || strcmp(mode, "posix") == 0)
		T_CHECK(windows >= NFILES, "%ld staging windows for %d files (statistics in %s)",
			windows, NFILES, stats);
	T_CHECK(fallbacks <= 0, "%ld writes fell back to the kernel (statistics in %s)", fallbacks,
		stats);
	T_CHECK(idle_names() == 0, "%d idle stores left after a normal exit", idle_names());

	st = run_self(dir, "exited", NULL);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the appender that _exits: status %#x", st);
	check_files(dir);
	T_CHECK(idle_names() == 0, "%d idle stores left after _exit", idle_names());

	st = run_self(dir, "killed", NULL);
	T_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the killed appender: status %#x", st);
	check_files(dir);
	int left = idle_names();
	st = run_self(dir, "start", NULL);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the starter failed (status %#x)", st);
	T_CHECK(idle_names() == 0,
		"%d idle stores of a killed process left after a start (%d before)", idle_names(),
		left);
	free(stats);
	return t_result();
}
