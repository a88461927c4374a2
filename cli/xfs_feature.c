/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "xfs_feature.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "../src/util/compiler.h"
#include "../src/util/crc32c.h"

/* The head of the on-disk superblock (struct xfs_dsb in the kernel's
 * fs/xfs/libxfs/xfs_format.h), big-endian except sb_crc. Only the fields
 * this tool reads or writes are named. */
struct xfs_dsb_head {
	uint8_t magic[4]; /* "XFSB" */
	uint8_t pad0[98];
	uint16_t sectsize; /* be16: the CRC covers this many bytes */
	uint8_t pad1[104];
	uint32_t features_compat; /* be32 */
	uint32_t features_ro_compat;
	uint32_t features_incompat;
	uint32_t features_log_incompat;
	uint32_t crc; /* le32, CRC32C of the sector with this zeroed */
} __attribute__((packed));
static_assert(offsetof(struct xfs_dsb_head, sectsize) == 102, "sb_sectsize offset");
static_assert(offsetof(struct xfs_dsb_head, features_incompat) == 216, "sb_features_incompat");
static_assert(offsetof(struct xfs_dsb_head, crc) == 224, "sb_crc offset");

#define XFS_SB_FEAT_INCOMPAT_EXCHRANGE (1u << 6)
#define SB_MAX 4096

int xfs_enable_exchange(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unsigned char sector[SB_MAX];
	struct xfs_dsb_head sb;
	int rc = -EINVAL;
	if (pread(fd, sector, sizeof(sb), 0) != (ssize_t)sizeof(sb))
		goto out;
	memcpy(&sb, sector, sizeof(sb));
	size_t sect = be16toh(sb.sectsize);
	if (memcmp(sb.magic, "XFSB", 4) != 0 || (sect != 512 && sect != 4096))
		goto out;
	if (pread(fd, sector, sect, 0) != (ssize_t)sect) {
		rc = -EIO;
		goto out;
	}
	uint32_t incompat = be32toh(sb.features_incompat);
	if (incompat & XFS_SB_FEAT_INCOMPAT_EXCHRANGE) {
		rc = 0;
		goto out;
	}
	sb.features_incompat = htobe32(incompat | XFS_SB_FEAT_INCOMPAT_EXCHRANGE);
	sb.crc = 0;
	memcpy(sector, &sb, sizeof(sb));
	sb.crc = htole32(sfs_crc32c(sector, sect));
	memcpy(sector, &sb, sizeof(sb));
	if (pwrite(fd, sector, sect, 0) != (ssize_t)sect || fsync(fd) != 0) {
		rc = -EIO;
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}
