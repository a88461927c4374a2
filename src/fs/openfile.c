/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "openfile.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/self.h"
#include "../sys/real.h"
#include "../util/compiler.h"
#include "fdtable.h"
#include "file.h"
#include "inode.h"
#include "dax.h"
#include "kernel_files.h"
#include "kpos.h"

/* A new open file of the file open at fd, with access mode acc (O_RDWR or
 * O_RDONLY), or -errno. Through /proc: the kernel checks the caller's
 * permission again, as for any open. */
static int reopen(int fd, int acc)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", fd);
	int kfd = SFS_REAL(open)(path, acc | O_CLOEXEC | O_NOCTTY);
	return kfd < 0 ? -errno : kfd;
}

int sfs_openfile_replace(int nfd, int appfd, int cloexec)
{
	if (cloexec < 0) {
		int fdflags = SFS_REAL(fcntl)(appfd, F_GETFD);
		if (fdflags < 0)
			return -errno;
		cloexec = (fdflags & FD_CLOEXEC) != 0;
	}
	if (SFS_REAL(dup3)(nfd, appfd, cloexec ? O_CLOEXEC : 0) < 0)
		return -errno;
	return 0;
}

/* The open file of an O_APPEND open that has lost O_APPEND starts at the
 * end of the file: a write the library does not see (stdio's internal
 * write: bash's `{ echo x; cmd; } >> f`) then goes where an append would,
 * unless another process appends meanwhile (README, Limits). */
static void at_end(int fd)
{
	SFS_REAL(lseek)(fd, 0, SEEK_END);
}

/* Takes O_APPEND off the open file at fd; false when the kernel refuses
 * (an append-only file, chattr +a). */
static bool drop_append(int fd)
{
	int fl = SFS_REAL(fcntl)(fd, F_GETFL);
	if (fl < 0 || SFS_REAL(fcntl)(fd, F_SETFL, fl & ~O_APPEND) != 0)
		return false;
	at_end(fd);
	return true;
}

int sfs_openfile_drop_append(struct sfs_inode *in)
{
	if (!in->kappend)
		return 0;
	if (!drop_append(in->kfd))
		return -EPERM; /* an append-only file: the kernel's answer too */
	in->kappend = false;
	return 0;
}

bool sfs_openfile_prepare(int appfd, int flags, int cloexec, bool locks, bool *widen,
			  bool *mergeable)
{
	*mergeable = !locks;
	if (widen)
		*widen = false;
	if ((flags & O_ACCMODE) == O_RDONLY)
		return false;
	if ((flags & O_ACCMODE) == O_WRONLY && widen && !locks) {
		/* Widened when the file is first leased (sfs_openfile_widen):
		 * a file written a few times and closed stays the kernel's, and
		 * never pays for the reopen. An O_APPEND open keeps O_APPEND
		 * meanwhile (in->kappend): its writes append through the
		 * kernel (RWF_APPEND), and so do those the library does not
		 * see. An append-only file (chattr +a) fails the widen. */
		*widen = true;
		*mergeable = true;
		return false;
	}
	/* O_DSYNC and O_SYNC (sync and strict modes: POSIX mode leaves such
	 * opens to the kernel) cannot be taken off an open file, and through
	 * it every write of the library's would wait for the device: the
	 * application's, which the log or an fdatasync makes durable already,
	 * and each checkpoint's. Strict DWOL by a forked worker, whose open
	 * made the inode: 0.44x the kernel's rate, against 0.74x for a thread
	 * whose process had the inode already. */
	bool sync_open = (flags & O_DSYNC) != 0;
	if ((flags & O_ACCMODE) == O_WRONLY || sync_open) {
		/* Replacing the open closes one of the file's descriptors, which
		 * would drop the process's POSIX locks on it. */
		int nfd = locks ? -EPERM : reopen(appfd, O_RDWR);
		if (nfd < 0 || sfs_openfile_replace(nfd, appfd, cloexec) != 0) {
			if (nfd >= 0)
				SFS_REAL(close)(nfd);
			if ((flags & O_ACCMODE) == O_WRONLY) {
				*mergeable = false;
				return false; /* no read access: the kernel writes, not us */
			}
			goto shared; /* synchronous, then: slower, no less right */
		}
		SFS_REAL(close)(nfd);
		int fl = SFS_REAL(fcntl)(appfd, F_GETFL);
		(void)SFS_REAL(fcntl)(appfd, F_SETFL,
				      (fl & ~O_APPEND) | (flags & (O_NONBLOCK | O_NOATIME)));
		if (flags & O_APPEND)
			at_end(appfd);
		return true;
	}
shared:
	if ((flags & O_APPEND) && !drop_append(appfd)) {
		*mergeable = false; /* an append-only file (chattr +a) */
		return false;
	}
	return true;
}

/* Points the application's descriptors of in, but except, at kfd's open
 * file and marks their files as sharing it (so that a fork gives each back
 * at its own offset); apart_only: only those that do not share it yet, and
 * those must be readers (kfd may be read-only). A file whose offset lives
 * in the kernel (kpos.h) keeps its open file unless it shares the inode's
 * and kfd's has that one's offset (keeps_pos). Returns whether every one
 * it had to point was. */
static bool point_at_kfd(struct sfs_inode *in, int kfd, int except, bool apart_only, bool keeps_pos)
{
	bool all = true;
	int limit = sfs_fd_limit();
	for (int fd = 0; fd < limit; fd++) {
		struct sfs_file *f = sfs_fd_get(fd);
		if (!f)
			continue;
		if (f->inode == in && fd != except && !(apart_only && f->kshared)) {
			bool may = !sfs_file_kpos_on(f) || (f->kshared && keeps_pos);
			if (may && (!apart_only || (sfs_file_flags(f) & O_ACCMODE) == O_RDONLY) &&
			    sfs_openfile_replace(kfd, fd, -1) == 0) {
				f->kshared = true;
			} else {
				all = false;
				if (!apart_only)
					f->kshared = false; /* the inode's goes */
			}
		}
		sfs_file_put(f);
	}
	return all;
}

/* Makes kfd, a readable and writable open file of in's file with no
 * O_APPEND, the inode's, for every application descriptor of it but
 * except (readers apart too; keeps_pos: point_at_kfd): the old one is
 * closed. Caller holds the lock; no lease is held. */
static void install_rdwr(struct sfs_inode *in, int kfd, int except, bool keeps_pos)
{
	in->apart = !point_at_kfd(in, kfd, except, false, keeps_pos);
	sfs_barrier_close(in);
	sfs_map_drop_all(&in->maps); /* read-only chunks of the old open file */
	int old = in->kfd;
	sfs_inode_set_kfd(in, kfd);
	in->writable = true;
	in->readable = true;
	in->kwritable = true;
	in->widen = false;
	in->kappend = false;
	sfs_inode_dax_setup(in);
	sfs_barrier_open(in);
	sfs_inode_maps_follow_writers(in); /* writable mappings for its writers */
	sfs_internal_close(old);
}

bool sfs_openfile_upgrade(struct sfs_inode *in, int appfd, int flags)
{
	bool mergeable;
	if (!sfs_openfile_prepare(appfd, flags, -1, false, NULL, &mergeable) || !mergeable)
		return false;
	int kfd = sfs_internal_dup(appfd);
	if (kfd < 0)
		return false;
	sfs_fd_set_internal(kfd, true);
	install_rdwr(in, kfd, appfd, false);
	return true;
}

bool sfs_openfile_widen(struct sfs_inode *in)
{
	bool locks = atomic_load(&in->posix_locks) || sfs_posix_locked(in->dev, in->ino);
	int nfd = locks || !in->mergeable ? -EPERM : reopen(in->kfd, O_RDWR);
	int kfd = -1;
	if (nfd >= 0) {
		/* The status flags the application opened with, less O_APPEND
		 * (the library appends itself once the file is leased). */
		int fl = SFS_REAL(fcntl)(in->kfd, F_GETFL);
		if (fl >= 0)
			SFS_REAL(fcntl)(nfd, F_SETFL, fl & (O_NONBLOCK | O_NOATIME));
		/* At the shared open file's offset, which an unseen write
		 * through a descriptor 0-2 uses (kpos.h); an O_APPEND open's
		 * at the end, where its next unseen write goes. */
		if (in->kappend) {
			SFS_REAL(lseek)(nfd, 0, SEEK_END);
		} else {
			off_t at = SFS_REAL(lseek)(in->kfd, 0, SEEK_CUR);
			if (at > 0)
				SFS_REAL(lseek)(nfd, at, SEEK_SET);
		}
		kfd = sfs_internal_dup(nfd);
		SFS_REAL(close)(nfd);
	}
	if (kfd >= 0) {
		sfs_fd_set_internal(kfd, true);
		install_rdwr(in, kfd, -1, true);
		return true;
	}
	/* No read access (a write-only file mode), POSIX locks that a swap
	 * would drop, or opens that do not share: the kernel's for good. */
	in->widen = false;
	in->mergeable = false;
	in->lease_never = true;
	return false;
}

bool sfs_openfile_merge(struct sfs_inode *in)
{
	if (atomic_load(&in->posix_locks) || sfs_posix_locked(in->dev, in->ino))
		return false; /* replacing an open file would drop the locks */
	in->apart = !point_at_kfd(in, in->kfd, -1, true, false);
	return !in->apart;
}
