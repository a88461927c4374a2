/* SPDX-License-Identifier: Apache-2.0 */
/* Durable metadata in sync and strict modes. The kernel file system serves
 * every namespace and attribute change and journals it atomically; these
 * make it durable before the call returns, by fsyncing the directory whose
 * entries changed (or the inode whose attributes did). XFS and ext4 commit
 * their journal up to that change, so everything the call did persists.
 * Each returns 0 or -errno and does nothing outside the managed file
 * system or in POSIX mode. */
#ifndef SFS_FS_METASYNC_H
#define SFS_FS_METASYNC_H

#include <stdbool.h>

#include "../sys/global.h"

/* Whether metadata calls are made durable (sync or strict mode). Inline:
 * every open and namespace call asks. */
static inline bool sfs_metasync_on(void)
{
	return sfs_g.active && sfs_g.opt.mode != SFS_MODE_POSIX;
}

/* The directory holding path's last component. */
int sfs_metasync_parent(int dirfd, const char *path);

/* The inode path names (atflags: AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH). */
int sfs_metasync_inode(int dirfd, const char *path, int atflags);

/* The inode fd refers to. */
int sfs_metasync_fd(int fd);

/* After open(dirfd, path, flags) returned fd; created: the call made the
 * file. Persists the new name, or a truncation (O_TRUNC). */
int sfs_metasync_open(int fd, int flags, int dirfd, const char *path, bool created);

/* Before such an open: whether it will create the file (its name is free
 * now). Only asked when sfs_metasync_on(). */
bool sfs_metasync_will_create(int dirfd, const char *path, int flags);

#endif
