/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "mapcopy.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "../sys/global.h"
#include "../sys/real.h"
#include "../map/protect.h"
#include "../util/compiler.h"
#include "../util/guard.h"
#include "../util/ntcopy.h"
#include "../util/pmem.h"
#include "../util/stats.h"
#include "coldwrite.h"
#include "dax.h"

int sfs_map_copy(struct sfs_inode *in, int64_t off, char *buf, size_t n, bool to_file)
{
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	bool rw = atomic_load_explicit(&in->maps_rw, memory_order_relaxed);
	int prot = PROT_READ | (rw ? PROT_WRITE : 0);
	bool flush = to_file && sfs_inode_dax_flushes(in);
	/* Not on DAX (stores there go to pmem, flushed or not). */
	bool cold = to_file && !flush && !sfs_inode_on_dax(in) && sfs_cold_write(in, off, n);
	if (!to_file)
		sfs_cold_read(in, off, n);
	bool flushed = false;
	int rc = 0;
	while (n > 0) {
		size_t in_chunk = (size_t)(chunk - (off & (chunk - 1)));
		size_t len = SFS_MIN(n, in_chunk);
		int err = 0;
		/* DAX: mapped at once (no page cache to spare a first touch).
		 * Read-only chunks (SPLITFS_PROTECT) take no store: the kernel
		 * writes (a write window, two mprotects, costs 4.7 times a
		 * pwrite here: README, Stray writes). */
		char *m = to_file && !rw ? (err = -EAGAIN, NULL) :
					   sfs_map_get(&in->maps, in->kfd, (uint64_t)off, prot,
						       !flush, &err);
		if (!m) {
			/* Not mapped (first touch, budget, radix): the kernel copies
			 * this piece. */
			if (err != -EAGAIN)
				sfs_stat_event(SFS_EV_kernel_fallbacks, 1);
			if (to_file)
				sfs_inode_kernel_changed(in);
			ssize_t r = to_file ? SFS_REAL(pwrite)(in->kfd, buf, len, off) :
					      SFS_REAL(pread)(in->kfd, buf, len, off);
			if (r < 0) {
				rc = -errno;
				break;
			}
			if ((size_t)r < len) {
				if (to_file) {
					rc = -EIO;
					break;
				}
				memset(buf + r, 0, len - (size_t)r); /* hole past EOF */
			}
		} else {
			char *p = m + (off & (chunk - 1));
			rc = !to_file ? sfs_map_load(buf, p, len) :
					sfs_map_store(p, buf, len,
						      flush ? sfs_pmem_copy_nodrain :
						      cold  ? sfs_copy_nt :
							      NULL);
			flushed |= flush;
			if (to_file && !flush)
				sfs_inode_kernel_changed(in);
			if (rc)
				break;
		}
		off += (int64_t)len;
		buf += len;
		n -= len;
	}
	if (flushed)
		sfs_pmem_drain();
	return rc;
}
