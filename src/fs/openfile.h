/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's open file behind a managed inode: one per process and file
 * where it can be (so the process can take a lease on it, lease.h), shared
 * by every descriptor the application opens on the file. Internal to fs/. */
#ifndef SFS_FS_OPENFILE_H
#define SFS_FS_OPENFILE_H

#include <fcntl.h>
#include <stdbool.h>

struct sfs_inode;

static inline bool sfs_openfile_writes(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY;
}

/* Makes the application's descriptor appfd refer to the open file of nfd
 * instead of its own (closing that one), keeping appfd's close-on-exec
 * (cloexec: whether it is set, when the caller knows; -1: asked). 0 or
 * -errno. */
int sfs_openfile_replace(int nfd, int appfd, int cloexec);

/* The kernel's open file behind appfd as the library needs it: readable
 * (a mapping needs read access), without O_APPEND (the library's pwrites
 * must not append) and without O_DSYNC or O_SYNC (the library makes each
 * write as durable as the mode says by itself). An O_WRONLY open, or one
 * with O_DSYNC or O_SYNC, is replaced by an O_RDWR one of the same file,
 * unless the process holds POSIX locks on it (locks);
 * with widen given, not now: *widen says it is to be done before the
 * file's first lease (sfs_openfile_widen). Returns whether the library may
 * write through it now; *mergeable: whether later opens may share it. The
 * application's view of its flags stays in its struct sfs_file. cloexec:
 * as for sfs_openfile_replace. */
bool sfs_openfile_prepare(int appfd, int flags, int cloexec, bool locks, bool *widen,
			  bool *mergeable);

/* Takes O_APPEND off kfd's open file if it still has it (in->kappend),
 * before the library writes through it at an offset. 0, or -EPERM (an
 * append-only file). Caller holds the lock. */
int sfs_openfile_drop_append(struct sfs_inode *in);

/* The inode's write-only open file (in->widen) is replaced by a readable
 * one, for every descriptor of the inode, before the file's first lease.
 * False when it cannot be (no read permission, POSIX locks, opens that do
 * not share it): the file is then the kernel's for good (lease_never).
 * Caller holds the lock; no lease is held. */
bool sfs_openfile_widen(struct sfs_inode *in);

/* The application's readers that kept an open file of their own
 * (in->apart) are pointed at kfd's, so that the process has one open file
 * of the file and a lease is possible. False when one cannot be (POSIX
 * locks, a writer apart): the lease is then refused as before. Caller
 * holds the lock; no lease is held. */
bool sfs_openfile_merge(struct sfs_inode *in);

/* A writer opens a file whose shared open file is read-only: the writer's
 * open (made readable) becomes the shared one, for every descriptor of the
 * inode. Caller holds the lock; no lease is held. */
bool sfs_openfile_upgrade(struct sfs_inode *in, int appfd, int flags);

#endif
