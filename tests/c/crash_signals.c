/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a crash ends the process as it would under the kernel.
 * The library handles SIGSEGV and SIGBUS itself (a copy from a bad
 * pointer answers EFAULT, util/guard.h) and passes the others on as the
 * application asked. Each case runs in a child that first names a file
 * under the directory (the library starts), then:
 *   - raise()s, kill()s or sigqueue()s SIGSEGV or SIGBUS with the default
 *     action: the child dies by that signal;
 *   - installs a handler that puts the default back and raises the signal
 *     again, then raises it (Python's faulthandler does this): dies by it;
 *   - stores through a null pointer: dies by SIGSEGV;
 *   - ignores SIGSEGV and raises it: lives, exits 0.
 * The library returned from a sent signal with the default action, which
 * then was lost: the children exited 0 (Python's test_faulthandler).
 *   crash_signals DIR */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

enum how { RAISE, KILL, QUEUE, HANDLER_RERAISES, NULL_STORE, IGNORED };
static const char *const how_name[] = {
	"raise", "kill", "sigqueue", "handler re-raises", "null store", "ignored, raised"};

static void reraise(int sig)
{
	signal(sig, SIG_DFL);
	raise(sig);
}

static void child(const char *dir, int sig, enum how how)
{
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none); /* no core files from the crashes */
	struct stat st;
	if (stat(dir, &st) != 0) /* the library starts on a path under its root */
		_exit(3);
	/* The default action, set by the program: a sanitizer's runtime may
	 * have put a handler of its own there. */
	signal(sig, SIG_DFL);
	switch (how) {
	case RAISE:
		raise(sig);
		break;
	case KILL:
		kill(getpid(), sig);
		break;
	case QUEUE:
		sigqueue(getpid(), sig, (union sigval){.sival_int = 1});
		break;
	case HANDLER_RERAISES:
		signal(sig, reraise);
		raise(sig);
		break;
	case NULL_STORE:
		*(volatile int *)(volatile void *)0 = 1;
		break;
	case IGNORED:
		signal(sig, SIG_IGN);
		raise(sig);
		_exit(0);
	}
	_exit(2); /* the signal was lost */
}

static void check(const char *dir, int sig, enum how how)
{
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0)
		child(dir, sig, how);
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid, "wait");
	if (how == IGNORED)
		T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s %s: status %#x, not exit 0",
			how_name[how], strsignal(sig), st);
	else
		T_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == sig,
			"%s %s: status %#x, not killed by it", how_name[how], strsignal(sig), st);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: crash_signals DIR");
	const int sigs[] = {SIGSEGV, SIGBUS};
	for (int s = 0; s < 2; s++)
		for (enum how h = RAISE; h <= HANDLER_RERAISES; h++)
			check(argv[1], sigs[s], h);
	check(argv[1], SIGSEGV, NULL_STORE);
	check(argv[1], SIGSEGV, IGNORED);
	return t_result();
}
