/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../init.h"
#include "../interpose/real.h"
#include "../util/compiler.h"
#include "../util/options.h"
#include "relink.h"

/* Writes staging bytes [off, off+n) to the target at the same offset. */
static int copy_range(struct sfs_inode *in, int64_t off, int64_t n)
{
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	char bounce[SFS_BLOCK * 16];
	while (n > 0) {
		int64_t len = SFS_MIN(n, chunk - (off & (chunk - 1)));
		/* The staging mapping if there is one; else a bounce buffer. */
		char *m = sfs_map_peek(&in->stage.maps, (uint64_t)off);
		const char *src = m ? m + (off & (chunk - 1)) : bounce;
		if (!m) {
			len = SFS_MIN(len, (int64_t)sizeof(bounce));
			ssize_t r = sfs_real.pread(in->stage.fd, bounce, (size_t)len, off);
			if (r < 0)
				return -errno;
			if (r < len) /* a hole past the staging file's end: zeros */
				memset(bounce + r, 0, (size_t)(len - r));
		}
		ssize_t w = sfs_real.pwrite(in->kfd, src, (size_t)len, off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += w;
		n -= w;
	}
	return 0;
}

static int copy_commit(struct sfs_inode *in, int64_t base, int64_t size)
{
	int rc = copy_range(in, base, size - base);
	if (rc)
		return rc;
	sfs_relink_empty_stage(in);
	return 0;
}

const struct sfs_relink_ops sfs_relink_copy = {
	.name = "copy",
	.kind = SFS_RELINK_COPY,
	.commit = copy_commit,
};
