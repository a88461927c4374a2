/* SPDX-License-Identifier: Apache-2.0 */
/* Copies between the application and a target file's chunk mappings, the
 * data path's inner loop (reads in read.c, writes in data.c). */
#ifndef SFS_FS_MAPCOPY_H
#define SFS_FS_MAPCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../map/protect.h"
#include "../oplog/oplog.h"
#include "../sys/global.h"
#include "../util/compiler.h"
#include "../util/guard.h"
#include "../util/ntcopy.h"
#include "coldwrite.h"
#include "inode.h"

/* Moves n bytes between buf and file offset off of the target through its
 * chunk mappings. Returns 0, or -EFAULT when a copy faulted (the caller then
 * redoes the operation through the kernel), or another -errno.
 * Stores on DAX (in->dax) are flushed and fenced before it returns when the
 * flush primitives are known; otherwise, and for every piece the kernel
 * writes, the inode is marked kdirty (its fsync needs the kernel's). */
int sfs_map_copy(struct sfs_inode *in, int64_t off, char *buf, size_t n, bool to_file);

/* sfs_map_copy of a read, inlined where it is one copy out of a chunk
 * already mapped, of a file with no table of recent blocks (coldwrite.h):
 * almost every read. The copy is a versioned read's, racing writers by
 * design (util/compiler.h). */
static inline int sfs_map_read(struct sfs_inode *in, int64_t off, char *buf, size_t n)
{
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	int64_t at = off & (chunk - 1);
	char *m;
	if (sfs_likely(at + (int64_t)n <= chunk) &&
	    !atomic_load_explicit(&in->recent, memory_order_relaxed) &&
	    (m = sfs_map_mapped(&in->maps, (uint64_t)off)) != NULL) {
		sfs_protect_may_read();
		sfs_racy_copy_begin();
		int rc = sfs_guarded_copy(buf, m + at, n);
		sfs_racy_copy_end();
		return rc;
	}
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
		bool cold = !sfs_oplog_dax() && sfs_cold_write(in, off, n);
		int rc;
		sfs_protect_open(); /* this thread's window (protect.h) */
		if (!cold)
			rc = sfs_guarded_copy(m + at, buf, n);
		else if ((rc = sfs_guarded_copy_by(m + at, buf, n, sfs_copy_nt)) != 0)
			sfs_copy_nt_fence(); /* cut short: its stores first */
		sfs_protect_close();
		sfs_inode_kernel_changed(in);
		return rc;
	}
	return sfs_map_copy(in, off, (char *)buf, n, true);
}

#endif
