/* SPDX-License-Identifier: Apache-2.0 */
/* The library handles SIGSEGV and SIGBUS itself (see util/guard.h) and
 * keeps the application's handlers for them on the side, calling them for
 * every fault that is not the library's. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>

#include "../util/guard.h"
#include "wrap.h"

SFS_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sfs_init();
	if (!sfs_guard_owns(sig))
		return sfs_real.sigaction(sig, act, old);
	return sfs_guard_app_action(sig, act, old);
}

SFS_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	sfs_init();
	if (!sfs_guard_owns(sig))
		return sfs_real.signal(sig, handler);
	struct sigaction act, old;
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART; /* BSD semantics, as glibc's signal() */
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	sfs_guard_app_action(sig, &act, &old);
	return old.sa_handler;
}
