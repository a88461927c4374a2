/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <linux/types.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/options.h"
#include "relink.h"

/* Debian 12's linux-libc-dev (6.1) predates the exchange-range ioctl
 * (Linux 6.10, fs/xfs/libxfs/xfs_fs.h). */
struct sfs_xfs_exchange_range {
	__s32 file1_fd;
	__u32 pad;
	__u64 file1_offset;
	__u64 file2_offset;
	__u64 length;
	__u64 flags;
};
static_assert(sizeof(struct sfs_xfs_exchange_range) == 40, "kernel ABI: 40-byte argument");
#define SFS_XFS_IOC_EXCHANGE_RANGE _IOW('X', 129, struct sfs_xfs_exchange_range)
#define SFS_XFS_EXCHANGE_RANGE_TO_EOF (1ULL << 0)

static int exchange_commit(const struct sfs_relink_target *t, int64_t base, int64_t size)
{
	/* TO_EOF swaps the two sizes, so the staging file must end exactly
	 * where the window does (its data sits past a header, stage.h). */
	int rc = sfs_relink_cut_store(t, size);
	if (rc)
		return rc;
	struct sfs_xfs_exchange_range x = {
		.file1_fd = t->stage->fd,
		.file1_offset = (__u64)sfs_stage_file_offset(t->stage, base),
		.file2_offset = (__u64)base,
		.length = (__u64)(size - base),
		.flags = SFS_XFS_EXCHANGE_RANGE_TO_EOF,
	};
	if (SFS_REAL(ioctl)(t->kfd, SFS_XFS_IOC_EXCHANGE_RANGE, &x) != 0) {
		/* XFS refuses (EINVAL) to exchange delayed-allocation extents,
		 * and an extending write() leaves speculative ones past the
		 * target's EOF. Drop them (they hold no data) and retry once. */
		if (errno != EINVAL)
			return -errno;
		int64_t eof = SFS_ALIGN_UP(t->ksize, (int64_t)SFS_BLOCK);
		if (SFS_REAL(fallocate)(t->kfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, eof,
					INT64_MAX - eof) != 0 ||
		    SFS_REAL(ioctl)(t->kfd, SFS_XFS_IOC_EXCHANGE_RANGE, &x) != 0)
			return -errno;
	}
	return 0;
}

const struct sfs_relink_ops sfs_relink_exchange = {
	.name = "exchange",
	.kind = SFS_RELINK_EXCHANGE,
	.commit = exchange_commit,
};
