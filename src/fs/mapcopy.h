/* SPDX-License-Identifier: Apache-2.0 */
/* Copies between the application and a target file's chunk mappings, the
 * data path's inner loop (reads in read.c, writes in data.c). */
#ifndef SFS_FS_MAPCOPY_H
#define SFS_FS_MAPCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../map/protect.h"
#include "../sys/global.h"
#include "../util/compiler.h"
#include "../util/guard.h"
#include "../util/ntcopy.h"
#include "coldwrite.h"
#include "dax.h"
#include "inode.h"

/* Moves n bytes between buf and file offset off of the target through its
 * chunk mappings. Returns 0, or -EFAULT when a copy faulted (the caller then
 * redoes the operation through the kernel), or another -errno.
 * Stores on DAX (in->dax) are flushed and fenced before it returns when the
 * flush primitives are known; otherwise, and for every piece the kernel
 * writes, the inode is marked kdirty (its fsync needs the kernel's). */
int sfs_map_copy(struct sfs_inode *in, int64_t off, char *buf, size_t n, bool to_file);

/* One copy out of a mapped chunk at p into buf: a versioned read's, racing
 * writers by design (util/compiler.h). 0 or -EFAULT. */
static inline int sfs_map_load(char *buf, const char *p, size_t n)
{
	sfs_protect_may_read();
	sfs_racy_copy_begin();
	int rc = sfs_guarded_copy(buf, p, n);
	sfs_racy_copy_end();
	return rc;
}

/* One store of buf into a mapped chunk at p, in this thread's window
 * (protect.h), by copy: NULL (a cached copy), sfs_copy_nt or
 * sfs_pmem_copy_nodrain. 0 or -EFAULT. */
static inline int sfs_map_store(char *p, const char *buf, size_t n,
				void *(*copy)(void *, const void *, size_t))
{
	sfs_protect_open();
	int rc = copy ? sfs_guarded_copy_by(p, buf, n, copy) : sfs_guarded_copy(p, buf, n);
	if (rc && copy == sfs_copy_nt)
		sfs_copy_nt_fence(); /* cut short: its stores first */
	sfs_protect_close();
	return rc;
}

/* sfs_map_copy of a read, inlined where it is one copy out of a chunk
 * already mapped, of a file with no table of recent blocks (coldwrite.h):
 * almost every read. */
static inline int sfs_map_read(struct sfs_inode *in, int64_t off, char *buf, size_t n)
{
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	int64_t at = off & (chunk - 1);
	char *m;
	if (sfs_likely(at + (int64_t)n <= chunk) &&
	    !atomic_load_explicit(&in->recent, memory_order_relaxed) &&
	    (m = sfs_map_mapped(&in->maps, (uint64_t)off)) != NULL)
		return sfs_map_load(buf, m + at, n);
	return sfs_map_copy(in, off, buf, n, false);
}

/* sfs_map_copy of an overwrite, inlined where it is one copy into a chunk
 * already mapped writable, of a file not on DAX (whose stores the library
 * may have to flush): every overwrite of a file in page cache but a chunk's
 * first few. The copy's way (cached or non-temporal) is sfs_map_copy's. */
static inline int sfs_map_write(struct sfs_inode *in, int64_t off, const char *buf, size_t n)
{
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	int64_t at = off & (chunk - 1);
	char *m;
	if (sfs_likely(at + (int64_t)n <= chunk) &&
	    atomic_load_explicit(&in->maps_rw, memory_order_relaxed) &&
	    !atomic_load_explicit(&in->dax, memory_order_relaxed) &&
	    (m = sfs_map_mapped(&in->maps, (uint64_t)off)) != NULL) {
		bool cold = !sfs_inode_on_dax(in) && sfs_cold_write(in, off, n);
		int rc = sfs_map_store(m + at, buf, n, cold ? sfs_copy_nt : NULL);
		sfs_inode_kernel_changed(in);
		return rc;
	}
	return sfs_map_copy(in, off, (char *)buf, n, true);
}

#endif
