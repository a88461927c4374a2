/* SPDX-License-Identifier: Apache-2.0 */
/* Description: fork while a background thread of the library is busy. On
 * DAX, the first flushed store of a process makes the library load
 * libpmem2 (dlopen) and map a page with it on a thread of its own. A fork
 * in the middle of that load used to hand the child a half-relocated
 * libpmem2: the child's own first flushed store then jumped through an
 * unrelocated entry and died of SIGSEGV (seen in the lab in killwriter's
 * writer, 3 times in 200 runs). Here each round starts a fresh process W
 * (so nothing is loaded yet), makes W's library start that load, forks
 * after a delay that sweeps over the load's duration, and has the child
 * write, fsync and overwrite a file of its own; child and parent must both
 * exit cleanly, the child print nothing (a child that could not load
 * libpmem2 said so and lost DAX: seen here before the fix), and their
 * files hold what they wrote. On a page-cache file
 * system nothing is loaded and the test checks plain fork semantics.
 *   FORK_LEARN_ROUNDS (default 48): rounds. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define BLK 4096

/* Writes a block, fsyncs (the file is then clean on media), and overwrites
 * it a few times: on DAX these stores are flushed, which needs libpmem2. */
static int scribble(const char *path, unsigned seed)
{
	unsigned char buf[BLK];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 10;
	t_fill(buf, BLK, seed, 0);
	if (pwrite(fd, buf, BLK, 0) != BLK || fsync(fd) != 0)
		return 11;
	for (unsigned i = 1; i <= 8; i++) {
		t_fill(buf, BLK, seed + i, 0);
		if (pwrite(fd, buf, BLK, 0) != BLK)
			return 12;
	}
	if (fsync(fd) != 0 || close(fd) != 0)
		return 13;
	return 0;
}

static bool holds(const char *path, unsigned seed)
{
	unsigned char *got = NULL, want[BLK];
	long n = t_read_kernel(path, &got);
	t_fill(want, BLK, seed, 0);
	bool ok = n == BLK && memcmp(got, want, BLK) == 0;
	free(got);
	return ok;
}

/* Process W: starts the library's load, forks after delay_us, waits for
 * the child. Exits with the child's status folded in. */
static void worker(const char *dir, int round, unsigned delay_us)
{
	char name[64];
	snprintf(name, sizeof(name), "w%d.dat", round);
	char wpath[4096];
	snprintf(wpath, sizeof(wpath), "%s", t_path(dir, name));
	int rc = scribble(wpath, (unsigned)round * 100);
	if (rc)
		_exit(rc);
	/* More flushed stores after the fsync: the load runs now, if not yet. */
	int fd = open(wpath, O_RDWR);
	unsigned char buf[BLK];
	t_fill(buf, BLK, (unsigned)round * 100 + 50, 0);
	if (fd < 0 || pwrite(fd, buf, BLK, 0) != BLK)
		_exit(14);
	struct timespec ts = {0, (long)delay_us * 1000};
	nanosleep(&ts, NULL);
	int err[2];
	if (pipe(err) != 0)
		_exit(15);
	pid_t pid = fork();
	if (pid < 0)
		_exit(15);
	if (pid == 0) {
		dup2(err[1], 2);
		snprintf(name, sizeof(name), "c%d.dat", round);
		_exit(scribble(t_path(dir, name), (unsigned)round * 100 + 1));
	}
	close(err[1]);
	int st;
	if (waitpid(pid, &st, 0) != pid)
		_exit(16);
	/* The child says nothing (the kernel's run says nothing): a library
	 * that could not load libpmem2 in it says so there. */
	char said[512];
	ssize_t n = read(err[0], said, sizeof(said) - 1);
	if (n > 0) {
		said[n] = 0;
		fprintf(stderr, "round %d, the child's stderr: %s", round, said);
		_exit(20);
	}
	if (fsync(fd) != 0 || close(fd) != 0)
		_exit(17);
	if (WIFSIGNALED(st))
		_exit(100 + WTERMSIG(st));
	_exit(WEXITSTATUS(st));
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	const char *e = getenv("FORK_LEARN_ROUNDS");
	int rounds = e ? atoi(e) : 48;
	alarm(600); /* a child stuck in a lock inherited from a busy thread */
	int bad = 0;
	for (int r = 0; r < rounds; r++) {
		/* 0 to 9.4 ms: the load takes milliseconds under emulation. */
		unsigned delay_us = (unsigned)(r % 16) * 625;
		pid_t w = fork();
		T_REQUIRE(w >= 0, "fork");
		if (w == 0)
			worker(dir, r, delay_us);
		int st;
		T_REQUIRE(waitpid(w, &st, 0) == w, "waitpid");
		bool clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		if (!clean && bad++ < 5) {
			T_CHECK(clean, "round %d (fork after %u us): status %#x (%s %d)", r,
				delay_us, st, WIFSIGNALED(st) ? "signal" : "exit",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		} else if (!clean) {
			t_failures++;
		}
		char name[64];
		snprintf(name, sizeof(name), "w%d.dat", r);
		T_CHECK(!clean || holds(t_path(dir, name), (unsigned)r * 100 + 50),
			"round %d: the parent's file", r);
		snprintf(name, sizeof(name), "c%d.dat", r);
		T_CHECK(!clean || holds(t_path(dir, name), (unsigned)r * 100 + 1 + 8),
			"round %d: the child's file", r);
	}
	if (bad)
		fprintf(stderr, "%d of %d rounds failed\n", bad, rounds);
	return t_result();
}
