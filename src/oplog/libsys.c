/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "libsys.h"

#include "../sys/real.h"
#include "../util/compiler.h"
#include "recover.h"

const struct sfs_sys *sfs_lib_sys(void)
{
	SFS_HOT static struct sfs_sys s;
	if (!s.open) {
#define SFS_SYS_REAL(ret, name, params) s.name = SFS_REAL(name);
		SFS_SYS_CALLS(SFS_SYS_REAL)
#undef SFS_SYS_REAL
		/* Not the next object's: see util/dirscan.h. */
		s.getdents64 = sfs_kernel_getdents64;
	}
	return &s;
}
