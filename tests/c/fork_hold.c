/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a descriptor shared by fork stays shared while anyone holds
 * it. The parent writes records through a descriptor (no O_APPEND: the
 * offset moves them), forks a child that forks a grandchild and exits at
 * once (a daemon's double fork), and writes on after the child is gone;
 * then the grandchild, which inherited the descriptor, writes one record
 * through it, and the parent writes the last. The kernel shares the offset
 * among all three: every record lands right after the previous one. A
 * library that took the parent's descriptor back when the child exited,
 * without seeing the grandchild, would keep its own offset and write over
 * the grandchild's record (or leave a hole). The same once more with
 * O_APPEND, and with the grandchild closing its copy before the parent
 * goes on (then the parent may be served by the library again). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define REC 512

static void rec(unsigned char *b, int seq)
{
	t_fill(b, REC, 7, (long)seq * REC);
}

static bool put(int fd, int seq)
{
	unsigned char b[REC];
	rec(b, seq);
	return write(fd, b, REC) == REC;
}

static void nap_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000};
	nanosleep(&ts, NULL);
}

/* One scenario: returns after checking the file. */
static void scenario(const char *dir, const char *name, int oflags, bool g_closes)
{
	char *path = t_path(dir, name);
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | oflags, 0644);
	T_REQUIRE(fd >= 0, "%s: open", name);
	int seq = 0;
	for (; seq < 10; seq++)
		T_REQUIRE(put(fd, seq), "%s: write %d", name, seq);
	int go[2], done[2];
	T_REQUIRE(pipe(go) == 0 && pipe(done) == 0, "pipe");
	pid_t c = fork();
	T_REQUIRE(c >= 0, "fork");
	if (c == 0) {
		pid_t g = fork();
		if (g == 0) {
			char x;
			if (g_closes) {
				close(fd);
				fd = -1;
			}
			if (read(go[0], &x, 1) != 1)
				_exit(2);
			/* The record after the parent's first twenty. */
			if (fd >= 0 && !put(fd, 20))
				_exit(3);
			_exit(write(done[1], "d", 1) == 1 ? 0 : 4);
		}
		_exit(g > 0 ? 0 : 1);
	}
	int st;
	T_REQUIRE(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child");
	/* The child is gone, the grandchild holds the descriptor: writes (and
	 * time for the library to look again) in between. */
	for (; seq < 20; seq++) {
		T_REQUIRE(put(fd, seq), "%s: write %d", name, seq);
		nap_ms(2);
	}
	char x;
	T_REQUIRE(write(go[1], "g", 1) == 1 && read(done[0], &x, 1) == 1, "%s: the grandchild",
		  name);
	if (!g_closes)
		seq++; /* record 20 is the grandchild's */
	for (int last = seq + 5; seq < last; seq++)
		T_REQUIRE(put(fd, seq), "%s: write %d", name, seq);
	T_CHECK(close(fd) == 0, "%s: close", name);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);

	unsigned char *got = NULL;
	long n = t_read_kernel(path, &got);
	T_CHECK(n == (long)seq * REC, "%s: %ld bytes, want %d records (%ld)", name, n, seq,
		(long)seq * REC);
	int bad = -1;
	for (int i = 0; i < seq && (long)(i + 1) * REC <= n; i++) {
		unsigned char b[REC];
		rec(b, i);
		if (memcmp(got + (long)i * REC, b, REC) != 0) {
			bad = i;
			break;
		}
	}
	T_CHECK(bad < 0, "%s: record %d is not where the shared offset put it", name, bad);
	free(got);
	unlink(path);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	scenario(dir, "hold.dat", 0, false);
	scenario(dir, "hold-append.dat", O_APPEND, false);
	scenario(dir, "hold-closed.dat", 0, true);
	return t_result();
}
