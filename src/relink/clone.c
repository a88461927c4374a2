/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../sys/real.h"
#include "../util/options.h"
#include "relink.h"

static int clone_commit(const struct sfs_relink_target *t, int64_t base, int64_t size)
{
	/* An unaligned length is accepted only when it ends at the source's
	 * EOF: cut the staging file there. */
	int rc = sfs_relink_cut_store(t, size);
	if (rc)
		return rc;
	struct file_clone_range r = {
		.src_fd = t->stage->fd,
		.src_offset = (__u64)sfs_stage_file_offset(t->stage, base),
		.src_length = (__u64)(size - base),
		.dest_offset = (__u64)base,
	};
	if (SFS_REAL(ioctl)(t->kfd, FICLONERANGE, &r) != 0)
		return -errno;
	return 0;
}

const struct sfs_relink_ops sfs_relink_clone = {
	.name = "clone",
	.kind = SFS_RELINK_CLONE,
	.commit = clone_commit,
};
