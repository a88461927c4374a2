/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "../interpose/real.h"
#include "../util/compiler.h"
#include "../util/options.h"
#include "relink.h"

/* Writes the window [base, size) to the target at the same offsets: pwrite
 * straight from the store's mapping (one copy, into the page cache), or
 * through a bounce buffer for a staging-file chunk that is not mapped. */
static int copy_commit(struct sfs_inode *in, int64_t base, int64_t size)
{
	char bounce[4096];
	for (int64_t off = base; off < size;) {
		size_t len = (size_t)(size - off);
		const char *src = sfs_stage_peek(&in->stage, off, &len);
		if (!src) {
			len = SFS_MIN(len, sizeof(bounce));
			int rc = sfs_stage_xfer(&in->stage, off, bounce, len, 0);
			if (rc)
				return rc;
			src = bounce;
		}
		ssize_t w = sfs_real.pwrite(in->kfd, src, len, off);
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
