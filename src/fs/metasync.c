/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "metasync.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sys/self.h"
#include "../sys/global.h"
#include "../sys/real.h"
#include "../sys/statq.h"
#include "../oplog/oplog.h"
#include "fdtable.h"
#include "file.h"
#include "inode.h"

/* Also in a vfork child (sys/global.h): what it creates, renames or
 * removes is as durable as the parent's own changes; the calls below edit
 * nothing of the parent's. */
/* syncfs of the managed file system, through the private folder (an
 * O_PATH descriptor cannot take syncfs): for a change no descriptor of its
 * own can make durable. Fails (EIO) on a file system shut down. */
static int sync_whole_fs(void)
{
	int priv = sfs_privdir();
	int fd = priv >= 0 ? SFS_REAL(openat)(priv, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		/* The program holds every descriptor it may (a create at its
		 * RLIMIT_NOFILE): the kernel's sync, which needs none and waits
		 * for every file system, this one's log included. */
		SFS_REAL(sync)();
		return 0;
	}
	if (fd < 0)
		return errno ? -errno : -EIO;
	int rc = SFS_REAL(syncfs)(fd) == 0 ? 0 : -errno;
	SFS_REAL(close)(fd);
	return rc;
}

/* fsync of fd when it is on the managed file system. A change is made
 * durable or the call reports why not: every failure is an error, never
 * "nothing to do" (XFS shut down by a power cut fails fstat and open with
 * EIO right after the change it lost). */
static int sync_if_ours(int fd)
{
	struct stat st;
	if (sfs_fstat_quiet(fd, &st) != 0)
		return -errno;
	if (st.st_dev != sfs_g.root_dev)
		return 0;
	if (SFS_REAL(fsync)(fd) == 0)
		return 0;
	/* Not every file type takes fsync; what the kernel journals is
	 * committed by a sync of the whole file system then. */
	if (errno == EINVAL || errno == EBADF)
		return SFS_REAL(syncfs)(fd) == 0 ? 0 : -errno;
	return -errno;
}

int sfs_metasync_parent(int dirfd, const char *path)
{
	if (!sfs_metasync_on() || !path || !*path)
		return 0;
	/* The directory part: everything before the last component (trailing
	 * slashes belong to the component). */
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	while (len > 0 && path[len - 1] != '/')
		len--;
	char dir[PATH_MAX];
	if (len == 0) {
		dir[0] = '.', dir[1] = '\0';
	} else if (len >= sizeof(dir)) {
		return 0; /* the kernel would have refused it already */
	} else {
		memcpy(dir, path, len);
		dir[len] = '\0';
	}
	int fd = SFS_REAL(openat)(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) /* no read permission, moved since (a race), or EIO */
		return sync_whole_fs();
	int rc = sync_if_ours(fd);
	SFS_REAL(close)(fd);
	return rc;
}

int sfs_metasync_fd(int fd)
{
	if (!sfs_metasync_on())
		return 0;
	return sync_if_ours(fd);
}

int sfs_metasync_inode(int dirfd, const char *path, int atflags)
{
	if (!sfs_metasync_on())
		return 0;
	if ((atflags & AT_EMPTY_PATH) && path && !*path)
		return sync_if_ours(dirfd);
	/* O_PATH cannot be fsynced; a plain open needs read permission the
	 * caller may lack. Then the whole file system (sync_whole_fs). */
	int nofollow = (atflags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0;
	int fd = SFS_REAL(openat)(dirfd, path,
				  O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | nofollow);
	if (fd >= 0) {
		int rc = sync_if_ours(fd);
		SFS_REAL(close)(fd);
		return rc;
	}
	/* Gone since (a race) or unreadable: the whole file system, which
	 * also fails when it is shut down. */
	struct stat st;
	if (sfs_stat_quiet(dirfd, path, atflags & AT_SYMLINK_NOFOLLOW, &st) != 0 ||
	    st.st_dev == sfs_g.root_dev)
		return sync_whole_fs();
	return 0;
}

bool sfs_metasync_will_create(int dirfd, const char *path, int flags)
{
	if (!(flags & O_CREAT) || !path)
		return false;
	struct stat st;
	return sfs_stat_quiet(dirfd, path, AT_SYMLINK_NOFOLLOW, &st) != 0 && errno == ENOENT;
}

int sfs_metasync_open(int fd, int flags, int dirfd, const char *path, bool created)
{
	if (fd < 0 || !sfs_metasync_on())
		return 0;
	if (created)
		return sfs_metasync_parent(dirfd, path);
	if (!(flags & O_TRUNC) || (flags & O_ACCMODE) == O_RDONLY)
		return 0;
	/* Truncated an existing file. If this process's log holds records of
	 * it, a TRUNCATE record keeps replay from writing them back past the
	 * new end; otherwise the file's new size is synced. */
	struct stat st;
	if (sfs_fstat_quiet(fd, &st) != 0)
		return -errno; /* shut down since the open: the new size is lost */
	if (!S_ISREG(st.st_mode) || st.st_dev != sfs_g.root_dev)
		return 0; /* /dev/null, a FIFO, another file system */
	struct sfs_file *f = sfs_live() ? sfs_fd_get(fd) : NULL;
	int rc = 1;
	if (f) {
		struct sfs_inode *in = f->inode;
		sfs_inode_lock(in);
		if (in->log.logged && sfs_oplog_on())
			rc = sfs_oplog_truncate(&in->log, in->kfd, in->ino, 0);
		sfs_inode_unlock(in);
		sfs_file_put(f);
	}
	if (rc == 1)
		rc = SFS_REAL(fdatasync)(fd) == 0 ? 0 : -errno;
	return rc;
}
