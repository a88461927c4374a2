/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "global.h"

#include <sys/resource.h>

_Alignas(4096) struct sfs_global sfs_g = {.priv_dirfd = -1, .stats_fd = -1};

void sfs_refresh_fsize_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0)
		atomic_store(&sfs_g.fsize_limit, rl.rlim_cur);
}
