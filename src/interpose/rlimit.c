/* SPDX-License-Identifier: Apache-2.0 */
/* RLIMIT_FSIZE: the kernel enforces it on write(); the library serves
 * writes itself, so it keeps a copy of the limit, refreshed here.
 *
 * These wrappers can run before anything else in the process: the ASan
 * runtime calls setrlimit while it initialises, before its shadow memory
 * exists (when the library itself is built with sanitizers). So they are
 * not instrumented, resolve libc's function themselves, and touch the
 * library only once it has initialised. */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <unistd.h>

#include "wrap.h"

#define NO_SANITIZE SFS_NO_SANITIZE
#define next sfs_early_next

/* A vfork child's limit is its own: the copy is the parent's. */
NO_SANITIZE static int refreshed(int r, int resource)
{
	if (r == 0 && resource == RLIMIT_FSIZE && !sfs_vfork_child &&
	    atomic_load_explicit(&sfs_init_state, memory_order_acquire) == 2)
		sfs_refresh_fsize_limit();
	return r;
}

NO_SANITIZE SFS_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rl)
{
	static void *real;
	int (*fn)(__rlimit_resource_t, const struct rlimit *) = next("setrlimit", &real);
	return refreshed(fn(resource, rl), (int)resource);
}

SFS_ALIAS(setrlimit64, setrlimit);

NO_SANITIZE SFS_EXPORT int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *rl,
				   struct rlimit *old)
{
	static void *real;
	int (*fn)(pid_t, __rlimit_resource_t, const struct rlimit *, struct rlimit *) =
		next("prlimit", &real);
	int r = fn(pid, resource, rl, old);
	return rl && (pid == 0 || pid == getpid()) ? refreshed(r, (int)resource) : r;
}

SFS_ALIAS(prlimit64, prlimit);
