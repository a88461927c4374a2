/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the application's SIGSEGV and SIGBUS handlers run with the
 * signal mask the kernel gives them. The library keeps its own handler of
 * both installed (stray stores into its mappings) and calls the
 * application's from it; the kernel blocked only what the library's action
 * asks (nothing: NODEFER). gnulib's c-stack handler, in diffutils' and
 * grep's tests, writes its message and raises SIGSEGV again, which must
 * stay pending until abort() ends the process; with the signal unblocked
 * it re-entered the handler for ever (test-c-stack spun for 13 minutes).
 * Each case runs in a child, bounded by alarm():
 *   mask     a fault in a handler with sa_mask {SIGUSR1}: SIGSEGV and
 *            SIGUSR1 blocked inside it; a raise(SIGSEGV) there stays
 *            pending (it does not re-enter the handler)
 *   nodefer  SIGBUS (a store past the end of a mapped file) with
 *            SA_NODEFER: SIGBUS not blocked inside the handler
 *   cstack   c-stack's shape: on an alternate stack, message, raise,
 *            abort(): the child dies of SIGABRT
 * The child first stats DIR, so that the library has started (POSIX mode
 * starts at the first call that names a path).
 *   fault_mask DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static sigjmp_buf back;
static volatile sig_atomic_t depth, nested, self_blocked, usr1_blocked, raised_pending;

static bool blocked(int sig)
{
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig) == 1;
}

/* Records the mask it runs with; raises its signal again (when asked) and
 * takes the pending copy back; leaves by siglongjmp. */
static volatile sig_atomic_t raise_again;
static void on_fault(int sig)
{
	if (depth++) {
		nested = 1;
		siglongjmp(back, 1);
	}
	self_blocked = blocked(sig);
	usr1_blocked = blocked(SIGUSR1);
	if (raise_again) {
		raise(sig);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigpending(&one);
		raised_pending = sigismember(&one, sig) == 1;
		if (raised_pending) {
			sigemptyset(&one);
			sigaddset(&one, sig);
			struct timespec zero = {0, 0};
			sigtimedwait(&one, NULL, &zero); /* take it back */
		}
	}
	siglongjmp(back, 1);
}

static void set_handler(int sig, void (*fn)(int), int flags, int also_blocked)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (also_blocked)
		sigaddset(&sa.sa_mask, also_blocked);
	T_REQUIRE(sigaction(sig, &sa, NULL) == 0, "sigaction %d", sig);
}

static int case_mask(void)
{
	char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_REQUIRE(page != MAP_FAILED, "mmap");
	set_handler(SIGSEGV, on_fault, 0, SIGUSR1);
	raise_again = 1;
	if (sigsetjmp(back, 1) == 0)
		*(volatile char *)page = 1;
	T_CHECK(!nested, "the handler's own raise(SIGSEGV) entered the handler again");
	T_CHECK(self_blocked, "SIGSEGV not blocked in its handler (no SA_NODEFER)");
	T_CHECK(usr1_blocked, "SIGUSR1 of sa_mask not blocked in the handler");
	T_CHECK(raised_pending, "raise(SIGSEGV) in the handler did not stay pending");
	T_CHECK(!blocked(SIGSEGV) && !blocked(SIGUSR1), "the mask after the handler");
	return t_result();
}

static int case_nodefer(const char *dir)
{
	char *path = t_path(dir, "fault_mask.bus");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0 && ftruncate(fd, 4096) == 0, "make %s", path);
	char *map = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_REQUIRE(map != MAP_FAILED, "mmap %s", path);
	set_handler(SIGBUS, on_fault, SA_NODEFER, 0);
	if (sigsetjmp(back, 1) == 0)
		map[4096] = 1; /* past the end of the file */
	T_CHECK(depth == 1 && !nested, "the SIGBUS handler ran %d times", (int)depth);
	T_CHECK(!self_blocked, "SIGBUS blocked in its SA_NODEFER handler");
	close(fd);
	unlink(path);
	return t_result();
}

/* gnulib's c-stack die(): a message, raise, abort. */
static void die_like_cstack(int sig)
{
	static const char msg[] = "fault_mask: program error (expected)\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	raise(sig);
	abort();
}

static int case_cstack(void)
{
	static char alt[64 << 10];
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0};
	T_REQUIRE(sigaltstack(&ss, NULL) == 0, "sigaltstack");
	set_handler(SIGSEGV, die_like_cstack, SA_ONSTACK | SA_RESETHAND, 0);
	char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_REQUIRE(page != MAP_FAILED, "mmap");
	*(volatile char *)page = 1;
	return 4; /* not reached */
}

static void run(const char *name, const char *dir, int want_sig)
{
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		t_failures = 0; /* the child's own checks */
		alarm(20);	/* a handler that re-enters for ever */
		struct rlimit none = {0, 0};
		setrlimit(RLIMIT_CORE, &none); /* the cstack case dumps no core */
		struct stat st;
		T_REQUIRE(stat(dir, &st) == 0, "stat %s", dir);
		if (strcmp(name, "mask") == 0)
			_exit(case_mask());
		if (strcmp(name, "nodefer") == 0)
			_exit(case_nodefer(dir));
		_exit(case_cstack());
	}
	int status;
	T_REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	if (want_sig)
		T_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == want_sig,
			"%s: the child ended with status %#x, not by signal %d", name, status,
			want_sig);
	else
		T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			"%s: the child ended with status %#x", name, status);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: fault_mask DIR");
	run("mask", argv[1], 0);
	run("nodefer", argv[1], 0);
	run("cstack", argv[1], SIGABRT);
	return t_result();
}
