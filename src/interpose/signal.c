/* SPDX-License-Identifier: Apache-2.0 */
/* The library handles SIGSEGV and SIGBUS itself (see util/guard.h) and
 * keeps the application's handlers for them on the side, calling them for
 * every fault that is not the library's. Until the library's handlers are
 * installed, these pass straight through: a sanitizer runtime calls them
 * during its own initialisation (SFS_NO_SANITIZE). */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>

#include "../util/guard.h"
#include "wrap.h"

SFS_NO_SANITIZE static bool guarded(int sig)
{
	return (sig == SIGSEGV || sig == SIGBUS) &&
	       atomic_load_explicit(&sfs_guard_installed, memory_order_acquire);
}

SFS_NO_SANITIZE SFS_EXPORT int sigaction(int sig, const struct sigaction *act,
					 struct sigaction *old)
{
	static void *real;
	if (!guarded(sig)) {
		int (*fn)(int, const struct sigaction *, struct sigaction *) =
			sfs_early_next("sigaction", &real);
		return fn(sig, act, old);
	}
	return sfs_guard_app_action(sig, act, old);
}

SFS_NO_SANITIZE SFS_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	static void *real;
	if (!guarded(sig)) {
		__sighandler_t (*fn)(int, __sighandler_t) = sfs_early_next("signal", &real);
		return fn(sig, handler);
	}
	struct sigaction act, old;
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART; /* BSD semantics, as glibc's signal() */
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	sfs_guard_app_action(sig, &act, &old);
	return old.sa_handler;
}
