/* SPDX-License-Identifier: Apache-2.0 */
/* Description: async-signal-safe calls stay safe (issue 13, item 12). A
 * timer's handler write()s records, now to the file the interrupted thread
 * is writing and fsyncing (with O_APPEND, as a log), now to another file,
 * while that thread writes enough to fill an operation log (sync, strict:
 * checkpoints). On the kernel this just works; the library must neither
 * deadlock on its own locks nor spin on its log, and lose nothing: every
 * record a handler wrote is in its file, whole, as is every block of the
 * main loop. Also: a default action that ends the process (SIGTERM) leaves
 * what the process wrote in its files. A watchdog (the parent) fails the
 * test if the child hangs. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define BLOCK 65536
#define NBLOCK 320 /* 20 MiB: more than a 16 MiB log */
#define REC 32

/* Handler record i of file tag: exactly REC bytes, newline last. */
static void make_rec(char *out, char tag, int i)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "HNDL%c%08d%018d", tag, i % 100000000, 0);
	memcpy(out, tmp, REC - 1);
	out[REC - 1] = '\n';
}

static int fa = -1, fb = -1;
/* failed: the errno of a failed write, 1000 + a short count, 2000: run on
 * another thread, 3000: nested */
static volatile sig_atomic_t na, nb, stop, failed, inside;

/* From the handler: the next record of stream tag to fd, counted in *n,
 * or the first failure noted. */
static void put_rec(int fd, char tag, volatile sig_atomic_t *n)
{
	char r[REC];
	make_rec(r, tag, *n);
	ssize_t w = write(fd, r, REC);
	if (w == REC)
		(*n)++;
	else if (!failed)
		failed = w < 0 ? errno : 1000 + (int)w;
}

static void on_alarm(int sig)
{
	(void)sig;
	if (stop)
		return;
	int saved = errno;
	/* As on the kernel: on the one thread the program has, never nested
	 * (the signal is blocked while its handler runs). */
	if (!failed && (pid_t)syscall(SYS_gettid) != getpid())
		failed = 2000;
	if (!failed && inside)
		failed = 3000;
	inside = 1;
	if ((na + nb) % 2 == 0)
		put_rec(fa, 'A', &na);
	else
		put_rec(fb, 'B', &nb);
	inside = 0;
	errno = saved;
}

/* The child: writes, with the timer going, then reports the counts. */
static int run(const char *a, const char *b, int report)
{
	fa = open(a, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	fb = open(b, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fa < 0 || fb < 0)
		return 3;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 500}, {0, 500}};
	setitimer(ITIMER_REAL, &it, NULL);
	static unsigned char blk[BLOCK];
	t_fill(blk, BLOCK, 9, 0);
	memcpy(blk, "MAIN", 4);
	blk[BLOCK - 1] = '\n';
	for (int i = 0; i < NBLOCK; i++) {
		if (write(fa, blk, BLOCK) != BLOCK)
			return 4;
		if (i % 4 == 3 && fsync(fa) != 0)
			return 5;
	}
	stop = 1;
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	int counts[3] = {na, nb, failed};
	if (write(report, counts, sizeof(counts)) != sizeof(counts))
		return 6;
	return close(fa) == 0 && close(fb) == 0 ? 0 : 7;
}

static void check(const char *a, const char *b, int wa, int wb)
{
	unsigned char *d;
	long n = t_read_kernel(a, &d);
	static unsigned char blk[BLOCK];
	t_fill(blk, BLOCK, 9, 0);
	memcpy(blk, "MAIN", 4);
	blk[BLOCK - 1] = '\n';
	int blocks = 0, recs = 0;
	long pos = 0;
	while (pos < n) {
		if (n - pos >= BLOCK && memcmp(d + pos, blk, BLOCK) == 0) {
			blocks++;
			pos += BLOCK;
		} else if (n - pos >= REC && memcmp(d + pos, "HNDLA", 5) == 0 &&
			   d[pos + REC - 1] == '\n') {
			char want[REC];
			make_rec(want, 'A', recs);
			T_CHECK(memcmp(d + pos, want, REC) == 0,
				"record %d of the handler in A: %.13s", recs,
				(const char *)d + pos);
			recs++;
			pos += REC;
		} else {
			T_CHECK(false, "file A: unexpected bytes at %ld", pos);
			break;
		}
	}
	T_CHECK(blocks == NBLOCK, "file A: %d of %d blocks", blocks, NBLOCK);
	T_CHECK(recs == wa, "file A: %d of %d handler records", recs, wa);
	free(d);
	n = t_read_kernel(b, &d);
	T_CHECK(n == (long)wb * REC, "file B: %ld bytes, %d records written", n, wb);
	for (int i = 0; i < wb && (long)(i + 1) * REC <= n; i++) {
		char want[REC];
		make_rec(want, 'B', i);
		if (memcmp(d + (long)i * REC, want, REC) != 0) {
			T_CHECK(false, "file B: record %d: %.13s", i,
				(const char *)d + (long)i * REC);
			break;
		}
	}
	free(d);
}

/* A child that writes and is ended by SIGTERM (default action). */
static void fatal_default(const char *dir)
{
	char *p = t_path(dir, "sigterm.dat");
	pid_t c = t_fork_writer(p, O_WRONLY, 1000, 50, 4, true);
	kill(c, SIGTERM);
	int st;
	waitpid(c, &st, 0);
	T_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %d, want SIGTERM", st);
	unsigned char *d;
	long n = t_read_kernel(p, &d);
	unsigned char want[50000];
	t_fill(want, sizeof(want), 4, 0);
	T_CHECK(n == (long)sizeof(want) && memcmp(d, want, sizeof(want)) == 0,
		"after SIGTERM the file holds %ld of %zu bytes written", n, sizeof(want));
	if (n >= 0)
		free(d);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char *a = t_path(dir, "sig.a"), *b = t_path(dir, "sig.b");
	int p;
	pid_t c = t_fork_pipe(&p);
	if (c == 0)
		_exit(run(a, b, p));
	/* The watchdog: a hang is a failure, not a stuck test run. */
	int st = 0;
	bool done = false;
	for (int i = 0; i < 1200 && !done; i++) {
		done = waitpid(c, &st, WNOHANG) == c;
		if (!done) {
			struct timespec t = {0, 100 * 1000 * 1000};
			nanosleep(&t, NULL);
		}
	}
	if (!done) {
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
		T_CHECK(false, "the writer hung with signal handlers writing (deadlock)");
		return t_result();
	}
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer status %d", st);
	int counts[3] = {0, 0, 0};
	T_CHECK(read(p, counts, sizeof(counts)) == sizeof(counts), "counts");
	T_CHECK(counts[0] > 10 && counts[1] > 10, "only %d and %d handler writes", counts[0],
		counts[1]);
	T_CHECK(counts[2] == 0, "the handler: %s",
		counts[2] == 3000 ? "ran inside itself" :
		counts[2] == 2000 ? "ran on another thread" :
		counts[2] >= 1000 ? "a short write" :
				    strerror(counts[2]));
	check(a, b, counts[0], counts[1]);
	fatal_default(dir);
	return t_result();
}
