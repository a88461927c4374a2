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
#include "inode.h"
#include "dax.h"

/* A new open file of the file open at fd, with access mode acc (O_RDWR or
 * O_RDONLY), or -errno. Through /proc: the kernel checks the caller's
 * permission again, as for any open. */
static int reopen(int fd, int acc)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", fd);
	int kfd = sfs_real.open(path, acc | O_CLOEXEC | O_NOCTTY);
	return kfd < 0 ? -errno : kfd;
}

int sfs_openfile_replace(int nfd, int appfd)
{
	int fdflags = sfs_real.fcntl(appfd, F_GETFD);
	if (fdflags < 0)
		return -errno;
	if (sfs_real.dup3(nfd, appfd, (fdflags & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0)
		return -errno;
	return 0;
}

bool sfs_openfile_prepare(int appfd, int flags, bool locks, bool *mergeable)
{
	*mergeable = !locks;
	if ((flags & O_ACCMODE) == O_RDONLY)
		return false;
	if ((flags & O_ACCMODE) == O_WRONLY) {
		/* Replacing the open closes one of the file's descriptors, which
		 * would drop the process's POSIX locks on it. */
		int nfd = locks ? -EPERM : reopen(appfd, O_RDWR);
		if (nfd < 0 || sfs_openfile_replace(nfd, appfd) != 0) {
			if (nfd >= 0)
				sfs_real.close(nfd);
			*mergeable = false;
			return false; /* no read access: the kernel writes, not us */
		}
		sfs_real.close(nfd);
		int fl = sfs_real.fcntl(appfd, F_GETFL);
		sfs_real.fcntl(appfd, F_SETFL,
			       (fl & ~O_APPEND) | (flags & (O_NONBLOCK | O_NOATIME)));
		return true;
	}
	if (flags & O_APPEND) {
		int fl = sfs_real.fcntl(appfd, F_GETFL);
		if (fl < 0 || sfs_real.fcntl(appfd, F_SETFL, fl & ~O_APPEND) != 0) {
			*mergeable = false; /* an append-only file (chattr +a) */
			return false;
		}
	}
	return true;
}

bool sfs_openfile_upgrade(struct sfs_inode *in, int appfd, int flags)
{
	bool mergeable;
	if (!sfs_openfile_prepare(appfd, flags, false, &mergeable) || !mergeable)
		return false;
	int kfd = sfs_real.fcntl(appfd, F_DUPFD_CLOEXEC, sfs_g.fd_floor);
	if (kfd < 0)
		return false;
	sfs_fd_set_internal(kfd, true);
	int fds[64];
	int n = sfs_inode_app_fds(in, fds, 64);
	for (int i = 0; i < SFS_MIN(n, 64); i++)
		if (fds[i] != appfd)
			sfs_openfile_replace(kfd, fds[i]);
	sfs_barrier_close(in);
	sfs_map_drop_all(&in->maps); /* read-only chunks of the old open file */
	int old = in->kfd;
	in->kfd = kfd;
	in->writable = true;
	in->readable = true;
	in->kwritable = true;
	sfs_inode_dax_setup(in);
	sfs_barrier_open(in);
	sfs_internal_close(old);
	return true;
}
