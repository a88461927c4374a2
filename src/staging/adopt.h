/* SPDX-License-Identifier: Apache-2.0 */
/* Adopting the staging stores of processes that died (format.h): putting
 * the appends their write() calls returned for into their files, as the
 * kernel's page cache would have kept them. Used by the library when it
 * starts and when it opens a file, and by `splitfs recover`.
 *
 * Trust. A store is used only if it is a private regular file (one link)
 * owned by the caller (root's `splitfs recover`: by anyone), bound by its
 * owner's name (stage.<uid>.*), not held by a live process (flock), written
 * on this very mount of the file system (boot and mount ids), and names a
 * target on the managed file system whose inode and generation match and
 * that the store's owner owns (or the store is root's). Its window goes in
 * only if the target is exactly as the owner left it (size == base: nobody
 * changed it since; or between base and the
 * window's end: the owner died relinking it): otherwise the store is
 * kept as orphan.* and the caller is told, never written over another
 * program's change. */
#ifndef SFS_STAGING_ADOPT_H
#define SFS_STAGING_ADOPT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../oplog/recover.h"

#define SFS_STORE_NAME_MAX 96

/* stage.<uid>.<dev>.<ino>: the name a bound store has in .splitfs. */
void sfs_store_name(char *buf, size_t n, uid_t uid, dev_t dev, ino_t ino);

/* idle.<uid>.<id>: the name of a store bound to no file (parked), id its
 * header file's inode number (unique while the store exists). A store
 * linked once can never be linked again once unlinked (the kernel clears
 * O_TMPFILE's I_LINKABLE at the first link), so between files a store is
 * renamed here and back, and its owner's death leaves the name behind:
 * sfs_adopt_dir removes parked stores whose owner is dead. */
void sfs_store_park_name(char *buf, size_t n, uid_t uid, uint64_t id);

/* Adopts the store called name in dirfd if its owner is dead. target_fd:
 * the target open for writing without O_APPEND, or -1 (opened from the
 * header). discard: drop its window (the target was just truncated).
 * Adds to rep: stores adopted, bytes, discarded, orphaned; the first
 * problem in rep->first_error. Returns the bytes put into the target, or
 * -errno when the store is not adoptable now. */
int64_t sfs_adopt_store(const struct sfs_recover_env *env, int dirfd, const char *name,
			int target_fd, bool discard, struct sfs_recovery *rep);

/* Adopts every dead store in dirfd (<root>/.splitfs) the caller may, and
 * removes the caller's parked stores whose owner is dead. */
void sfs_adopt_dir(const struct sfs_recover_env *env, int dirfd, struct sfs_recovery *rep);

/* The same for one name of dirfd's (a caller that reads the directory
 * itself, for more than stores); other names are left alone. */
void sfs_adopt_entry(const struct sfs_recover_env *env, int dirfd, const char *name,
		     struct sfs_recovery *rep);

/* The library's environment: its real calls, its user, this mount, and
 * root_fd (the caller's O_RDONLY descriptor of a directory on the mount,
 * for file handles; or -1). */
void sfs_adopt_env_lib(struct sfs_recover_env *env, int root_fd);

/* The library, opening a file (dev, ino) it has no inode for: adopts a
 * dead store of this user's for it first. fd: the application's new
 * descriptor; truncated: the open had O_TRUNC. Returns whether there was
 * a store (the file's size may have changed). */
bool sfs_adopt_for_open(int fd, dev_t dev, ino_t ino, bool truncated);

#endif
