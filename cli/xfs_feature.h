/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SFS_CLI_XFS_FEATURE_H
#define SFS_CLI_XFS_FEATURE_H

/* Sets XFS_SB_FEAT_INCOMPAT_EXCHRANGE in the primary superblock of the
 * unmounted XFS image or device at path, fixing the superblock CRC. Needed
 * because xfsprogs before 6.10 (Debian 12 has 6.1) cannot make a file system
 * with it, and Linux >= 6.10 refuses XFS_IOC_EXCHANGE_RANGE without it.
 * Returns 0 (also when the bit was already set) or -errno. */
int xfs_enable_exchange(const char *path);

#endif
