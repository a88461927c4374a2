/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "protect.h"

#include "../sys/global.h"
#include "../util/msg.h"

int sfs_pkey = -1;

void sfs_protect_init(void)
{
	if (!sfs_g.opt.protect)
		return;
	sfs_pkey = pkey_alloc(0, PKEY_DISABLE_WRITE);
	if (sfs_g.opt.verbose)
		sfs_msg("SPLITFS_PROTECT: %s",
			sfs_pkey >= 0 ?
				"protection key: stores open a per-thread window" :
				"no protection keys: read-only mappings, overwrites through the kernel");
}
