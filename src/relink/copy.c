/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/options.h"
#include "relink.h"

/* Writes the window [base, size) to the target at the same offsets: pwrite
 * straight from the store's mapping (one copy, into the page cache), or
 * through a bounce buffer for a staging-file chunk that is not mapped.
 *
 * At most COPY_CHUNK a call: the page cache sizes a write's folios by the
 * write. 2 MiB folios would let a reader's 2 MiB-aligned chunk mapping map
 * them with one PMD entry (Fig. 4's first sequential read of a relinked
 * file: 270-300 ns an op against 345-355 with these pieces), but on a VM
 * whose balloon reports free memory (bench/machine.sh, page_reporting) a
 * 2 MiB block is one the host took back, and the first store to it faults
 * in the host: with 2 MiB pieces 6 of 12 Fig. 4 runs here relinked 160 MiB
 * in 205 ms instead of 12 (no compaction: compact_stall stayed 0), with
 * 256 KiB pieces none of 8. Smaller folios also keep a later 4 KiB store
 * from dirtying 2 MiB.
 * The pieces are aligned in the file: a folio of 2^n pages starts at a
 * multiple of its size, so a 256 KiB piece that started 64 KiB past a
 * boundary made 64 KiB folios, and a reader of the file's mappings took a
 * fault per 64 KiB instead of one per 256 KiB.
 * On DAX (sync/strict modes on pmem stage their appends, fs/logged.c) there
 * are no folios: a whole contiguous piece a call. */
#define COPY_CHUNK (256 << 10)
#define COPY_CHUNK_DAX (64 << 20)

static int copy_commit(const struct sfs_relink_target *t, int64_t base, int64_t size)
{
	char bounce[4096];
	int64_t chunk = t->dax ? COPY_CHUNK_DAX : COPY_CHUNK;
	for (int64_t off = base; off < size;) {
		size_t len = (size_t)SFS_MIN(size - off, chunk - (off & (chunk - 1)));
		const char *src = sfs_stage_peek(t->stage, off, &len);
		if (!src) {
			len = SFS_MIN(len, sizeof(bounce));
			int rc = sfs_stage_xfer(t->stage, off, bounce, len, 0);
			if (rc)
				return rc;
			src = bounce;
		}
		ssize_t w = sfs_real.pwrite(t->kfd, src, len, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		off += w;
	}
	return 0;
}

const struct sfs_relink_ops sfs_relink_copy = {
	.name = "copy",
	.kind = SFS_RELINK_COPY,
	.commit = copy_commit,
};
