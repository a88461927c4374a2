/* SPDX-License-Identifier: Apache-2.0 */
/* A copy whose stores bypass the CPU caches (non-temporal), for data that
 * goes to memory nobody will read soon: a 4 KiB store into a page that is
 * not cached costs a read of each line from DRAM first (read for
 * ownership), which a non-temporal store does not. Random 4 KiB copies
 * into a 128 MiB shared file mapping, this host (AMD EPYC, 32 MiB L3):
 * memcpy 375-410 ns, this copy 230-250 ns (with its fence); into a hot
 * page, memcpy 46 ns and this copy 230 ns. So it is for cold
 * destinations only (fs/coldwrite.h decides).
 *
 * glibc's memcpy takes non-temporal stores only for copies larger than
 * most of the last-level cache, and libpmem2's copies need a pmem2 map
 * (DAX); neither serves a 4 KiB copy into the page cache. */
#ifndef SFS_UTIL_NTCOPY_H
#define SFS_UTIL_NTCOPY_H

#include <stddef.h>

/* Copies n bytes from src to dst (which do not overlap): the whole 64-byte
 * lines of dst with non-temporal stores, the partial lines at either end
 * with memcpy, then a store fence, so that the bytes are visible to every
 * other thread and process before anything the caller stores next (the
 * seqlock that publishes them). Where the CPU has no such stores: memcpy.
 * Returns dst. */
void *sfs_copy_nt(void *dst, const void *src, size_t n);

/* The store fence alone: for a copy that a fault cut short (util/guard.h
 * jumps out before sfs_copy_nt's own fence), before anyone else writes
 * the bytes it was storing. */
void sfs_copy_nt_fence(void);

#endif
