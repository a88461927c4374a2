/* SPDX-License-Identifier: Apache-2.0 */
/* Persistence on DAX (persistent memory mapped straight into the process):
 * a file on a DAX file system is mapped with MAP_SYNC and written with
 * cache-line flushes (or non-temporal stores) and one fence, which makes the
 * bytes durable without a system call. The primitives are PMDK's libpmem2
 * (pmem2_get_memcpy_fn / pmem2_get_drain_fn pick clwb, clflushopt or
 * non-temporal stores and see eADR); it is loaded with dlopen the first
 * time a DAX file needs it, so a process on a page-cache file system never
 * pays for it (libpmem2 pulls in libndctl, libdaxctl, libudev, libcrypto).
 *
 * Without DAX (or without libpmem2) sfs_pmem_map fails with -ENOTSUP and
 * the caller keeps its system-call path. */
#ifndef SFS_UTIL_PMEM_H
#define SFS_UTIL_PMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct sfs_pmem_map {
	char *addr; /* NULL: not mapped */
	size_t len;
	void *map; /* struct pmem2_map * */
};

/* Maps the first len bytes of fd (which must already be that long and
 * allocated) with MAP_SYNC through libpmem2, requiring cache-line (or byte)
 * store granularity: 0, or -ENOTSUP when fd is not DAX or libpmem2 cannot be
 * loaded (the reason is reported once), or another -errno. */
int sfs_pmem_map(int fd, size_t len, struct sfs_pmem_map *m);

/* Copies the vector to off with non-temporal stores or flushes, then one
 * fence: durable on return. off + the vector's length must lie in the map. */
void sfs_pmem_writev(struct sfs_pmem_map *m, uint64_t off, const struct iovec *v, int cnt);

/* Unmaps (the mapping is the process's own; a forked child calls it on
 * its inherited copy). */
void sfs_pmem_unmap(struct sfs_pmem_map *m);

#endif
