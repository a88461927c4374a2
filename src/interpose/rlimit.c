/* SPDX-License-Identifier: Apache-2.0 */
/* RLIMIT_FSIZE: the kernel enforces it on write(); the library serves
 * writes itself, so it keeps a copy of the limit, refreshed here. */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <unistd.h>

#include "wrap.h"

static int refreshed(int r, int resource)
{
	if (r == 0 && resource == RLIMIT_FSIZE)
		sfs_refresh_fsize_limit();
	return r;
}

SFS_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rl)
{
	sfs_init();
	return refreshed(sfs_real.setrlimit(resource, rl), (int)resource);
}

SFS_EXPORT int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rl)
{
	sfs_init();
	return refreshed(sfs_real.setrlimit64(resource, rl), (int)resource);
}

SFS_EXPORT int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *rl,
		       struct rlimit *old)
{
	sfs_init();
	int r = sfs_real.prlimit(pid, resource, rl, old);
	return rl && (pid == 0 || pid == sfs_self_pid()) ? refreshed(r, (int)resource) : r;
}

SFS_EXPORT int prlimit64(pid_t pid, __rlimit_resource_t resource, const struct rlimit64 *rl,
			 struct rlimit64 *old)
{
	sfs_init();
	int r = sfs_real.prlimit64(pid, resource, rl, old);
	return rl && (pid == 0 || pid == sfs_self_pid()) ? refreshed(r, (int)resource) : r;
}
