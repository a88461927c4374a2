/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "libsys.h"

#include "../sys/real.h"
#include "recover.h"

const struct sfs_sys *sfs_lib_sys(void)
{
	static struct sfs_sys s;
	if (!s.open) {
		s.open = sfs_real.open;
		s.openat = sfs_real.openat;
		s.pread = sfs_real.pread;
		s.pwrite = sfs_real.pwrite;
		s.ftruncate = sfs_real.ftruncate;
		s.fsync = sfs_real.fsync;
		s.close = sfs_real.close;
		s.renameat = sfs_real.renameat;
		s.ioctl = sfs_real.ioctl;
		s.fstat = sfs_real.fstat;
		s.mmap = sfs_real.mmap;
		s.dup = sfs_real.dup;
		s.unlinkat = sfs_real.unlinkat;
		s.flock = sfs_real.flock;
		s.fallocate = sfs_real.fallocate;
		s.statx = sfs_real.statx;
		s.fstatat = sfs_real.fstatat;
	}
	return &s;
}
