/* SPDX-License-Identifier: Apache-2.0 */
/* Signal dispositions. The library handles SIGSEGV and SIGBUS itself (see
 * util/guard.h), the lease-break signal once it takes leases (fs/lease.h),
 * and runs the application's handlers of the other signals through a
 * trampoline that defers them out of the library's critical sections, and
 * the default actions that end the process after a flush (util/signals.h).
 * Each keeps the application's actions on the side: what the application
 * set is what it reads back. Until the library's handlers are installed,
 * these pass straight through: a sanitizer runtime calls them during its
 * own initialisation (SFS_NO_SANITIZE). glibc's other signal() family
 * members call sigaction internally, so they are here too. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>

#include "../fs/lease.h"
#include "../util/guard.h"
#include "../util/signals.h"
#include "wrap.h"

SFS_NO_SANITIZE static bool guarded(int sig)
{
	return (sig == SIGSEGV || sig == SIGBUS) &&
	       atomic_load_explicit(&sfs_guard_installed, memory_order_acquire);
}

/* The application's sigaction, wherever the library keeps it; < 0: the
 * real one serves (not started, or a signal the library leaves alone). */
SFS_NO_SANITIZE static int virtual_action(int sig, const struct sigaction *act,
					  struct sigaction *old)
{
	if (guarded(sig))
		return sfs_guard_app_action(sig, act, old);
	if (sfs_lease_owns(sig))
		return sfs_lease_app_action(act, old);
	if (sfs_signals_own(sig))
		return sfs_signals_action(sig, act, old);
	return -1;
}

SFS_NO_SANITIZE static int any_sigaction(int sig, const struct sigaction *act,
					 struct sigaction *old)
{
	static void *real;
	int (*fn)(int, const struct sigaction *, struct sigaction *) =
		sfs_early_next("sigaction", &real);
	if (sfs_unlikely(sfs_vfork_child)) {
		/* Its dispositions are its own (the kernel copied them), and
		 * nothing of the library runs in it: what it sets goes to the
		 * kernel as it is. The record of what the application set is
		 * the parent's: read, never written. */
		struct sigaction was;
		if (virtual_action(sig, NULL, &was) < 0)
			return fn(sig, act, old);
		if (act && fn(sig, act, NULL) != 0)
			return -1;
		if (old)
			*old = was;
		return 0;
	}
	if (act && act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN) {
		/* The handler may run the library's code (a write), which must
		 * not look a real function up inside it (sys/real.h). Before
		 * the start (a sanitizer's runtime, another library's
		 * constructor), the start does it. (The state read here, not
		 * by sfs_initialized: an instrumented call.) */
		if (atomic_load_explicit(&sfs_init_state, memory_order_acquire) == 2)
			sfs_real_resolve();
		else
			atomic_store_explicit(&sfs_real_handler_seen, true, memory_order_relaxed);
	}
	int r = virtual_action(sig, act, old);
	if (r >= 0)
		return r;
	return fn(sig, act, old);
}

SFS_NO_SANITIZE SFS_EXPORT int sigaction(int sig, const struct sigaction *act,
					 struct sigaction *old)
{
	return any_sigaction(sig, act, old);
}

int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
SFS_NO_SANITIZE SFS_EXPORT int __sigaction(int sig, const struct sigaction *act,
					   struct sigaction *old)
{
	return any_sigaction(sig, act, old);
}

/* signal() with the given flags and, unless SA_NODEFER, sig in the mask. */
SFS_NO_SANITIZE static __sighandler_t set_handler(int sig, __sighandler_t handler, int flags)
{
	struct sigaction act, old;
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER) && sig > 0 && sig < 65)
		sigaddset(&act.sa_mask, sig);
	if (any_sigaction(sig, &act, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* BSD semantics, as glibc's signal(), bsd_signal() and ssignal(). */
SFS_NO_SANITIZE SFS_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	return set_handler(sig, handler, SA_RESTART);
}

__sighandler_t bsd_signal(int sig, __sighandler_t handler);
SFS_NO_SANITIZE SFS_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t handler)
{
	return set_handler(sig, handler, SA_RESTART);
}

SFS_NO_SANITIZE SFS_EXPORT __sighandler_t ssignal(int sig, __sighandler_t handler)
{
	return set_handler(sig, handler, SA_RESTART);
}

/* System V semantics: one shot, not blocked during the handler. */
SFS_NO_SANITIZE SFS_EXPORT __sighandler_t sysv_signal(int sig, __sighandler_t handler)
{
	return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER);
}

__sighandler_t __sysv_signal(int sig, __sighandler_t handler);
SFS_NO_SANITIZE SFS_EXPORT __sighandler_t __sysv_signal(int sig, __sighandler_t handler)
{
	return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER);
}

/* sigset (System V): SIG_HOLD blocks the signal; any other disposition is
 * installed with an empty mask and unblocks it. Returns the previous
 * disposition, or SIG_HOLD if the signal was blocked. */
SFS_NO_SANITIZE SFS_EXPORT __sighandler_t sigset(int sig, __sighandler_t disp)
{
	sigset_t one, was;
	sigemptyset(&one);
	if (sig <= 0 || sig >= 65 || sigaddset(&one, sig) != 0) {
		errno = EINVAL;
		return SIG_ERR;
	}
	struct sigaction old;
	if (disp == SIG_HOLD) {
		if (any_sigaction(sig, NULL, &old) != 0 ||
		    pthread_sigmask(SIG_BLOCK, &one, &was) != 0)
			return SIG_ERR;
		return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
	}
	struct sigaction act;
	memset(&act, 0, sizeof(act));
	act.sa_handler = disp;
	sigemptyset(&act.sa_mask);
	if (any_sigaction(sig, &act, &old) != 0 || pthread_sigmask(SIG_UNBLOCK, &one, &was) != 0)
		return SIG_ERR;
	return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
}

SFS_NO_SANITIZE SFS_EXPORT int sigignore(int sig)
{
	struct sigaction act;
	memset(&act, 0, sizeof(act));
	act.sa_handler = SIG_IGN;
	sigemptyset(&act.sa_mask);
	return any_sigaction(sig, &act, NULL);
}

/* siginterrupt: whether the signal interrupts system calls (no SA_RESTART). */
SFS_NO_SANITIZE SFS_EXPORT int siginterrupt(int sig, int flag)
{
	struct sigaction act;
	if (any_sigaction(sig, NULL, &act) != 0)
		return -1;
	if (flag)
		act.sa_flags &= ~SA_RESTART;
	else
		act.sa_flags |= SA_RESTART;
	return any_sigaction(sig, &act, NULL);
}
