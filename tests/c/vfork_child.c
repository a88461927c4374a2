/* SPDX-License-Identifier: Apache-2.0 */
/* Description: vfork is the kernel's: the child shares the parent's memory
 * (a store it makes before _exit is the parent's, which is how programs
 * report a failed exec), and what it does before its exec or _exit stays
 * its own. The parent stages appends through A (inheritable) and B
 * (close-on-exec), installs a SIGUSR1 handler, then:
 *  1. a child stores into a shared variable, closes A, ignores SIGUSR1,
 *     lowers RLIMIT_FSIZE to 1 KiB and leaves with _exit; the parent must
 *     see the store, and still write, read and append through A beyond
 *     1 KiB, and read back (and run) its own SIGUSR1 handler;
 *  2. a child whose exec fails stores its errno for the parent;
 *  3. a child execs this program, which must find every byte the parent
 *     wrote to A and B, and append through A (inherited, O_APPEND);
 * finally the parent checks the whole of A through the kernel. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define N 50000	  /* bytes staged through each of A and B */
#define TAIL 3000 /* what the exec'd child appends through A */

static unsigned char want[N + TAIL];
static volatile int shared_store;
static volatile int shared_errno;
static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled = 1;
}

static bool holds(int fd, long size, const unsigned char *bytes)
{
	unsigned char *got = NULL;
	long have = 0;
	long n = t_read_fd(fd, &got, &have);
	bool ok = n == size && have == size && memcmp(got, bytes, (size_t)size) == 0;
	free(got);
	return ok;
}

/* The exec'd program (3). */
static int child(int a, int b)
{
	T_CHECK(holds(a, N, want), "A holds what the parent wrote");
	T_CHECK(fcntl(b, F_GETFD) == -1 && errno == EBADF, "B closed at exec");
	T_CHECK(write(a, want + N, TAIL) == TAIL, "append through A");
	return t_result();
}

int main(int argc, char **argv)
{
	t_fill(want, sizeof(want), 21, 0);
	if (argc == 4 && strcmp(argv[1], "--child") == 0)
		return child(atoi(argv[2]), atoi(argv[3]));
	const char *dir = argc > 1 ? argv[1] : ".";
	char *pa = strdup(t_path(dir, "vfork.a"));
	char *pb = strdup(t_path(dir, "vfork.b"));
	unlink(pa);
	unlink(pb);
	int a = open(pa, O_RDWR | O_CREAT | O_APPEND, 0644);
	int b = open(pb, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	T_REQUIRE(a >= 0 && b >= 0, "open");
	for (long off = 0; off < N; off += 1000) {
		T_REQUIRE(write(a, want + off, 1000) == 1000, "write A");
		T_REQUIRE(write(b, want + off, 1000) == 1000, "write B");
	}
	struct sigaction act;
	memset(&act, 0, sizeof(act));
	act.sa_handler = on_usr1;
	sigemptyset(&act.sa_mask);
	T_REQUIRE(sigaction(SIGUSR1, &act, NULL) == 0, "sigaction");

	/* 1. */
	pid_t pid = vfork();
	if (pid == 0) {
		shared_store = 1;
		close(a);
		struct sigaction ign;
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		sigaction(SIGUSR1, &ign, NULL);
		struct rlimit small = {1024, 1024};
		setrlimit(RLIMIT_FSIZE, &small);
		_exit(0);
	}
	T_REQUIRE(pid > 0, "vfork");
	int status;
	T_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status), "first child");
	T_CHECK(shared_store == 1, "the child's store is the parent's");
	T_CHECK(holds(a, N, want), "A after the child closed its copy");
	T_CHECK(holds(b, N, want), "B after the child");
	struct sigaction old;
	T_CHECK(sigaction(SIGUSR1, NULL, &old) == 0 && old.sa_handler == on_usr1,
		"the parent's SIGUSR1 handler");
	raise(SIGUSR1);
	T_CHECK(handled == 1, "the handler ran");
	/* Past the 1 KiB the child set for itself, through A's offset (the
	 * end) and back. */
	T_CHECK(ftruncate(a, 0) == 0, "ftruncate");
	for (long off = 0; off < N; off += 1000)
		T_CHECK(write(a, want + off, 1000) == 1000, "rewrite A");
	T_CHECK(holds(a, N, want), "A rewritten");

	/* 2. */
	pid = vfork();
	if (pid == 0) {
		char *none[] = {"/nonexistent/splitfs-vfork", NULL};
		execv(none[0], none);
		shared_errno = errno;
		_exit(127);
	}
	T_REQUIRE(pid > 0, "vfork");
	T_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 127,
		"second child");
	T_CHECK(shared_errno == ENOENT, "the failed exec's errno, through memory (%d)",
		shared_errno);

	/* 3. */
	char fa[16], fb[16];
	snprintf(fa, sizeof(fa), "%d", a);
	snprintf(fb, sizeof(fb), "%d", b);
	pid = vfork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "--child", fa, fb, (char *)NULL);
		_exit(126);
	}
	T_REQUIRE(pid > 0, "vfork");
	T_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"the exec'd child checked A and B (status %d)", status);
	T_CHECK(holds(a, N + TAIL, want), "A with the child's append");
	T_CHECK(write(a, "", 0) == 0 && fsync(a) == 0, "fsync");
	T_CHECK(t_kernel_holds_stream(pa, N + TAIL, 21), "A through the kernel");
	close(a);
	close(b);
	unlink(pa);
	unlink(pb);
	return t_result();
}
