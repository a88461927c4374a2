/* SPDX-License-Identifier: Apache-2.0 */
/* The lab (tests/lab/setup.sh builds it into the lab cache).
 * xfs_set_exchrange.c - set XFS_SB_FEAT_INCOMPAT_EXCHRANGE (1<<6) in the primary
 * superblock of an UNMOUNTED XFS v5 image/device and fix the sb CRC.
 * Needed because Debian 12's xfsprogs 6.1 predates `mkfs.xfs -i exchange=1`
 * (xfsprogs >= 6.10) and its xfs_db write verifier rejects the unknown bit.
 * Without the bit, Linux >= 6.10 returns EOPNOTSUPP for XFS_IOC_EXCHANGE_RANGE.
 * --clear takes the bit away again (only on a cleanly unmounted file system),
 * so that xfs_repair 6.1, which refuses the unknown bit, can check it.
 * usage: xfs_set_exchrange [--clear] DEV_OR_IMAGE     (prints old/new value)
 * Offsets from struct xfs_dsb (fs/xfs/libxfs/xfs_format.h):
 *   sb_magicnum @0 ("XFSB"), sb_sectsize @102 (be16), sb_features_incompat @216 (be32),
 *   sb_crc @224 (le32). The CRC covers sb_sectsize bytes (512 or 4096).
 * Adapted from the team's lab tools (/work/shared/tools/daxlab/xfs_set_exchrange.c). */
#define _GNU_SOURCE
#include <endian.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uint32_t crc32c(uint32_t crc, const unsigned char *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
	}
	return crc;
}

int main(int argc, char **argv)
{
	int clear = argc == 3 && strcmp(argv[1], "--clear") == 0;
	if (argc != 2 + clear) {
		fprintf(stderr, "usage: %s [--clear] DEV\n", argv[0]);
		return 2;
	}
	const char *dev = argv[1 + clear];
	int fd = open(dev, O_RDWR);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	unsigned char sb[4096];
	if (pread(fd, sb, 512, 0) != 512) {
		perror("pread");
		return 1;
	}
	if (memcmp(sb, "XFSB", 4) != 0) {
		fprintf(stderr, "not an XFS superblock\n");
		return 1;
	}
	size_t sect = (size_t)sb[102] << 8 | sb[103];
	if (sect != 512 && sect != 4096) {
		fprintf(stderr, "unexpected sector size %zu\n", sect);
		return 1;
	}
	if (pread(fd, sb, sect, 0) != (ssize_t)sect) {
		perror("pread");
		return 1;
	}
	uint32_t inc;
	memcpy(&inc, sb + 216, 4);
	inc = be32toh(inc);
	uint32_t ninc = clear ? inc & ~(1u << 6) : inc | (1u << 6);
	printf("features_incompat: 0x%x -> 0x%x\n", inc, ninc);
	uint32_t be = htobe32(ninc);
	memcpy(sb + 216, &be, 4);
	memset(sb + 224, 0, 4);
	uint32_t crc = ~crc32c(~0u, sb, sect);
	uint32_t le = htole32(crc);
	memcpy(sb + 224, &le, 4);
	if (pwrite(fd, sb, sect, 0) != (ssize_t)sect) {
		perror("pwrite");
		return 1;
	}
	fsync(fd);
	close(fd);
	printf("sb crc = 0x%08x\n", crc);
	return 0;
}
