/* SPDX-License-Identifier: Apache-2.0 */
/* The library's own lookups of a file: what it is (type, mode, owner,
 * device, inode number, size), never when it changed. On kernels with
 * multigrain timestamps (Linux 6.13 and later) a stat that asks for the
 * change or modification time marks the inode's ctime as queried, and the
 * next read of the file then pays an access-time update, a transaction on
 * XFS: a 16 KiB read after a plain fstat took 4.3 µs here (Linux 6.18),
 * after this one 2.2 µs, as with no stat at all. The application's own
 * stat calls are the kernel's, whole (tests/suites/strace.sh checks). */
#ifndef SFS_SYS_STATQ_H
#define SFS_SYS_STATQ_H

#include <fcntl.h>
#include <sys/stat.h>

/* fstatat(dirfd, path, st, flags) without the timestamps (st_atim,
 * st_mtim and st_ctim are zero): 0, or -1 with errno. */
int sfs_stat_quiet(int dirfd, const char *path, int flags, struct stat *st);

/* The same for a descriptor. */
static inline int sfs_fstat_quiet(int fd, struct stat *st)
{
	return sfs_stat_quiet(fd, "", AT_EMPTY_PATH, st);
}

#endif
