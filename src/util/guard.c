/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "guard.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../sys/real.h"
#include "compiler.h"
#include "signals.h"
#include "stats.h"

#if SFS_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Initial-exec TLS: the library is preloaded, so its TLS sits in the static
 * block and the signal handler may touch it safely.
 * The recovery point is the compiler's __builtin_setjmp: its buffer holds
 * only the frame, the stack pointer and the resume address (the compiler
 * saves the callee-saved registers around it), three stores where
 * sigsetjmp(env, 0) cost 40 instructions and two calls on every copy of
 * every read and overwrite. Nothing else needs restoring: the handler
 * blocks no signal (SA_NODEFER, an empty mask), so the thread's mask at the
 * fault is still its mask after the jump, as with siglongjmp(env) of a
 * sigsetjmp(env, 0). */
#if SFS_TSAN
/* ThreadSanitizer keeps a shadow call stack that only its interceptors of
 * sigsetjmp and siglongjmp unwind: its build keeps those. */
typedef sigjmp_buf guard_env;
#define GUARD_SET(env) sigsetjmp(env, 0)
#define GUARD_JUMP(env) siglongjmp(env, 1)
#else
typedef void *guard_env[5]; /* __builtin_setjmp's buffer: five words */
#define GUARD_SET(env) __builtin_setjmp(env)
#define GUARD_JUMP(env) __builtin_longjmp(env, 1)
#endif

struct guard_tls {
	guard_env env;
	volatile sig_atomic_t armed;
};
static __thread struct guard_tls guard __attribute__((tls_model("initial-exec")));

#define SA_EXPOSE_TAGBITS_ 0x00000800u /* <asm/signal-defs.h>, not in glibc's */
#define SA_RESTORER_ 0x04000000u       /* x86 */

/* The application's handlers for the two guarded signals, as it set them. */
SFS_HOT static struct sigaction app_act[2];
SFS_HOT static pthread_mutex_t app_act_lock = PTHREAD_MUTEX_INITIALIZER;
SFS_HOT static bool installed;
SFS_HOT _Atomic int sfs_guard_installed;

/* Index into app_act; callers pass SIGSEGV or SIGBUS only. */
static int slot(int sig)
{
	return sig == SIGBUS;
}

/* Back to the armed copy's recovery point. Not in the function that set
 * it (__builtin_longjmp's rule). The frames it leaves (the copy's, the
 * handler's and the kernel's signal frame) are never returned to: under
 * AddressSanitizer their poisoned slots are cleared first, as its
 * interceptor of siglongjmp does. */
__attribute__((noinline, noreturn)) static void escape(void)
{
#if SFS_ASAN
	__asan_handle_no_return();
#endif
	GUARD_JUMP(guard.env);
}

static void handler(int sig, siginfo_t *info, void *ctx)
{
	if (guard.armed) {
		guard.armed = 0;
		escape();
	}
	/* Not ours: behave as if the application's handler had been installed. */
	struct sigaction a = app_act[slot(sig)];
	/* Sent (kill, raise, sigqueue: si_code <= 0), not a fault: nothing
	 * re-executes, so returning would lose it. */
	bool sent = info && info->si_code <= 0;
	if (sent && a.sa_handler == SIG_IGN)
		return; /* the kernel discards a sent signal that is ignored */
	if (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN) {
		/* A synchronous fault cannot be ignored: restore the default and
		 * return, so the faulting instruction re-executes and the kernel
		 * applies the default action (core dump). A sent signal is sent
		 * again, to this thread: NODEFER leaves it unblocked, so it
		 * ends the process before the call returns, as the first one
		 * would have (Python's faulthandler re-raises a crash this way). */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		SFS_REAL(sigaction)(sig, &dfl, NULL);
		if (sent)
			tgkill(getpid(), gettid(), sig);
		return;
	}
	/* The guard's action blocks nothing (NODEFER): the application's
	 * handler gets the mask its own action asks for. One that raises its
	 * signal again before abort() (gnulib's c-stack) finds it blocked,
	 * not a handler that re-enters for ever (tests/c/fault_mask.c). */
	sfs_signals_run_app(sig, &a, &app_act[slot(sig)], info, ctx);
}

void sfs_guard_install(void)
{
	pthread_mutex_lock(&app_act_lock);
	if (!installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = handler;
		/* NODEFER: we leave the handler by a jump that restores no
		 * mask, so the signal must not stay blocked. */
		sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		if (SFS_REAL(sigaction)(SIGSEGV, &sa, &app_act[0]) == 0 &&
		    SFS_REAL(sigaction)(SIGBUS, &sa, &app_act[1]) == 0) {
			installed = true;
			sfs_guard_installed = 1;
		}
	}
	pthread_mutex_unlock(&app_act_lock);
}

/* memcpy called through a pointer: its nonnull declaration must not let the
 * compiler (or UBSan) assume the pointers are valid, since catching the
 * fault of a bad one is the point. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

int sfs_guarded_copy_by(void *dst, const void *src, size_t n,
			void *(*copy)(void *, const void *, size_t))
{
	if (!installed) {
		/* No guard (before init): copy plainly. */
		copy(dst, src, n);
		return 0;
	}
	if (GUARD_SET(guard.env)) {
		sfs_stat_event(SFS_EV_guard_faults, 1);
		return -EFAULT;
	}
	guard.armed = 1;
	copy(dst, src, n);
	guard.armed = 0;
	return 0;
}

int sfs_guarded_copy(void *dst, const void *src, size_t n)
{
	return sfs_guarded_copy_by(dst, src, n, copy_fn);
}

int sfs_guard_owns(int sig)
{
	return installed && (sig == SIGSEGV || sig == SIGBUS);
}

int sfs_guard_app_action(int sig, const struct sigaction *act, struct sigaction *old)
{
	int i = slot(sig);
	pthread_mutex_lock(&app_act_lock);
	if (old)
		*old = app_act[i];
	if (act) {
		/* Stored as the kernel stores it: unknown flag bits cleared,
		 * SIGKILL and SIGSTOP never blocked. */
		app_act[i] = *act;
		app_act[i].sa_flags &=
			(int)(SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART |
			      SA_NODEFER | SA_RESETHAND | SA_EXPOSE_TAGBITS_ | SA_RESTORER_);
		sigdelset(&app_act[i].sa_mask, SIGKILL);
		sigdelset(&app_act[i].sa_mask, SIGSTOP);
	}
	pthread_mutex_unlock(&app_act_lock);
	return 0;
}
