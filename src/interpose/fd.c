/* SPDX-License-Identifier: Apache-2.0 */
/* Descriptor calls: close, dup family, fcntl. dup'd descriptors share one
 * open-file object, as they share one open file description in the kernel.
 * The library's own descriptors are invisible: closing or duplicating one
 * answers EBADF, as it would without the library. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fs/flush.h"
#include "../fs/forkwatch.h"
#include "../fs/inode.h"
#include "../fs/process.h"
#include "../sys/statq.h"
#include "../util/msg.h"
#include "fdlist.h"
#include "wrap.h"
#include "../fs/kernel_files.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

SFS_EXPORT int close(int fd)
{
	if (!sfs_active())
		return SFS_REAL(close)(fd);
	if (sfs_fd_is_internal(fd)) {
		errno = EBADF;
		return -1;
	}
	struct sfs_file *f = sfs_fd_remove(fd);
	if (!f)
		return SFS_REAL(close)(fd);
	sfs_file_kpos_settle(f, fd);
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_close);
	int r = sfs_file_close(fd, f);
	sfs_stat_call_end(SFS_CALL_close, t0, 0, false);
	return r;
}

/* The kernel closed fd (dup2 over it): relink and drop our entry. */
static void closed_by_kernel(int fd)
{
	struct sfs_file *gone = sfs_fd_remove(fd);
	if (gone) {
		sfs_file_kpos_settle(gone, fd);
		sfs_inode_flush(gone->inode, SFS_FLUSH_VISIBLE);
		sfs_file_put(gone);
	}
}

/* Before a dup of oldfd: a pending oldfd (fdtable.h) is managed first, so
 * that the dup copies the open file the library has made it use and both
 * numbers share one managed open file and offset, as they share the
 * kernel's: a program that opens its input and dup2s it onto 0 (dd, a
 * shell's `< file`) reads it through the library. If a kernel call on it
 * is running meanwhile, it stays the kernel's, and so does the dup. */
static void manage_before_dup(int oldfd)
{
	if (sfs_fd_kind(oldfd) != SFS_FD_KIND_PENDING)
		return;
	int saved = errno;
	/* Only a reader: a writer dup2'd onto 1 (a shell's builtin after
	 * `> f` or `>> f`, a daemon's log) is often written through stdio's
	 * internal write, which the library does not see; managed, its open
	 * file would lose O_APPEND and its offset would stop following the
	 * writes. It stays the kernel's, and so does the dup. */
	int fl = SFS_REAL(fcntl)(oldfd, F_GETFL);
	bool reader = fl >= 0 && (fl & O_ACCMODE) == O_RDONLY;
	sfs_busy_enter(); /* as a read's promotion (interpose/wrap.h) */
	if (reader && sfs_fd_pending_claim(oldfd))
		sfs_manage_pending(oldfd);
	else
		sfs_fd_pending_forget(oldfd);
	sfs_busy_exit();
	errno = saved;
}

/* newfd now refers to what oldfd does (manage_before_dup ran first). */
static void duplicated(int oldfd, int newfd)
{
	sfs_fd_pending_forget(oldfd); /* still pending: a promotion raced the dup */
	struct sfs_file *f = sfs_fd_get(oldfd);
	if (f) {
		sfs_file_install(newfd, f);
		sfs_file_put(f);
	} else if (sfs_fd_is_dsync(oldfd)) {
		sfs_fd_set_dsync(newfd, true);
	}
	sfs_fdlist_dup(oldfd, newfd);
}

static int close_range_impl(unsigned first, unsigned last, int flags)
{
	/* Flags the kernel rejects, or no range: let it say so before the
	 * library forgets any descriptor. */
	if (!sfs_active() || (flags & CLOSE_RANGE_CLOEXEC) || first > last ||
	    ((unsigned)flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)))
		return SFS_REAL(close_range)(first, last, flags);
	unsigned limit = (unsigned)sfs_fd_limit();
	unsigned end = last < limit ? last : (limit ? limit - 1 : 0);
	for (unsigned fd = first; fd <= end && fd < limit; fd++)
		closed_by_kernel((int)fd);
	/* Close around the library's own descriptors. */
	unsigned lo = first;
	for (unsigned fd = first; fd <= end && fd < limit; fd++) {
		if (!sfs_fd_is_internal((int)fd))
			continue;
		if (lo < fd && SFS_REAL(close_range)(lo, fd - 1, flags) != 0)
			return -1;
		lo = fd + 1;
	}
	if (lo <= last)
		return SFS_REAL(close_range)(lo, last, flags);
	return 0;
}

SFS_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	return close_range_impl(first, last, flags);
}

SFS_EXPORT void closefrom(int lowfd)
{
	if (lowfd < 0)
		lowfd = 0;
	if (close_range_impl((unsigned)lowfd, ~0U, 0) != 0) {
		/* No close_range (old kernel): close what the table knows. */
		int limit = sfs_fd_limit();
		for (int fd = lowfd; fd < limit; fd++)
			if (!sfs_fd_is_internal(fd))
				close(fd);
		SFS_REAL(closefrom)(limit > lowfd ? limit : lowfd);
	}
}

SFS_EXPORT int dup(int fd)
{
	if (!sfs_active())
		return SFS_REAL(dup)(fd);
	if (sfs_fd_is_internal(fd)) {
		errno = EBADF;
		return -1;
	}
	manage_before_dup(fd);
	int r = SFS_FD_RETRY(int, -1, SFS_REAL(dup)(fd));
	if (r >= 0)
		duplicated(fd, r);
	return r;
}

/* dup2/dup3 onto one of the library's descriptors. Moving ours out of the
 * way is not implemented: refuse rather than lose the library's file. */
static int onto_internal(int newfd)
{
	sfs_warn("dup2 onto descriptor %d, which the library uses: refused (EBUSY)", newfd);
	errno = EBUSY;
	return -1;
}

SFS_EXPORT int dup2(int oldfd, int newfd)
{
	if (!sfs_active())
		return SFS_REAL(dup2)(oldfd, newfd);
	if (sfs_fd_is_internal(oldfd)) {
		errno = EBADF;
		return -1;
	}
	if (oldfd != newfd && sfs_fd_is_internal(newfd))
		return onto_internal(newfd);
	if (oldfd != newfd)
		manage_before_dup(oldfd);
	int r = SFS_REAL(dup2)(oldfd, newfd);
	if (r >= 0 && oldfd != newfd) {
		closed_by_kernel(newfd);
		duplicated(oldfd, newfd);
	}
	return r;
}

SFS_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if (!sfs_active())
		return SFS_REAL(dup3)(oldfd, newfd, flags);
	if (sfs_fd_is_internal(oldfd)) {
		errno = EBADF;
		return -1;
	}
	if (oldfd != newfd && sfs_fd_is_internal(newfd))
		return onto_internal(newfd);
	if (oldfd != newfd)
		manage_before_dup(oldfd);
	int r = SFS_REAL(dup3)(oldfd, newfd, flags);
	if (r >= 0) {
		closed_by_kernel(newfd);
		duplicated(oldfd, newfd);
	}
	return r;
}

/* The application holds (or held) POSIX record locks on fd's file, which
 * may or may not be a descriptor the library manages. */
static void noted_posix_lock(int fd)
{
	struct stat st;
	int saved = errno;
	if (sfs_fstat_quiet(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == sfs_g.root_dev)
		sfs_posix_locked_add(st.st_dev, st.st_ino);
	errno = saved;
}

/* lockf takes POSIX record locks through glibc's internal fcntl. */
SFS_EXPORT int lockf(int fd, int cmd, off_t len)
{
	sfs_init();
	int r = SFS_REAL(lockf)(fd, cmd, len);
	if (r == 0 && sfs_live() && (cmd == F_LOCK || cmd == F_TLOCK))
		noted_posix_lock(fd);
	return r;
}

SFS_ALIAS(lockf64, lockf);

/* The status flags F_SETFL may change (the rest of f->flags stays). */
#define SETFL_MASK (O_APPEND | O_NONBLOCK | O_NOATIME | O_DIRECT | O_ASYNC)

/* F_SETFL on a managed descriptor. The application's view changes at once
 * (f->flags); the kernel's open file, which the library adapts and may
 * share between opens (inode.h), gets the flags that do not change what the
 * library does with it: O_APPEND stays off (the library appends itself),
 * and O_DIRECT hands the file to the kernel first. */
static int setfl(int (*real)(int, int, ...), int fd, int want)
{
	struct sfs_file *f = sfs_fd_get(fd);
	if (!f)
		return real(fd, F_SETFL, want);
	if (want & O_DIRECT) {
		sfs_demote_inode(f->inode);
		sfs_file_put(f);
		return real(fd, F_SETFL, want);
	}
	int r = real(fd, F_SETFL, want & ~O_APPEND);
	if (r == 0) {
		int old = sfs_file_flags(f);
		atomic_store(&f->flags, (old & ~SETFL_MASK) | (want & SETFL_MASK));
	}
	sfs_file_put(f);
	return r;
}

/* The flags of an open file that the library's adapted one may lack or
 * have where the application's open did not (fs/openfile.h). */
#define ADAPTED_MASK (O_ACCMODE | SETFL_MASK | O_SYNC | O_DSYNC)

/* F_GETFL: the access mode and status flags the application opened with
 * and set, not the library's adapted ones. */
static int getfl(int (*real)(int, int, ...), int fd)
{
	int r = real(fd, F_GETFL);
	struct sfs_file *f = r >= 0 ? sfs_fd_get(fd) : NULL;
	if (!f)
		return r;
	int mine = sfs_file_flags(f);
	r = (r & ~ADAPTED_MASK) | (mine & ADAPTED_MASK);
	sfs_file_put(f);
	return r;
}

/* Commands with which the application uses the open file itself in ways
 * the library's sharing and leases would change: its own leases and their
 * signals, open-file locks. The file is left to the kernel first. */
static bool owns_open_file(int cmd)
{
	switch (cmd) {
	case F_SETLEASE:
	case F_GETLEASE:
	case F_SETSIG:
	case F_SETOWN:
	case F_SETOWN_EX:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
	case F_NOTIFY:
		return true;
	default:
		return false;
	}
}

static int fcntl_impl(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
	if (!sfs_active())
		return real(fd, cmd, arg);
	if (sfs_fd_is_internal(fd)) {
		errno = EBADF;
		return -1;
	}
	if (cmd == F_SETFL)
		return setfl(real, fd, (int)(intptr_t)arg);
	if (cmd == F_GETFL)
		return getfl(real, fd);
	if (owns_open_file(cmd))
		sfs_demote_fd(fd);
	else if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		manage_before_dup(fd);
	int r = cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ?
			SFS_FD_RETRY(int, -1, real(fd, cmd, arg)) :
			real(fd, cmd, arg);
	if (r < 0)
		return r;
	if ((cmd == F_SETLK || cmd == F_SETLKW) && ((struct flock *)arg)->l_type != F_UNLCK)
		noted_posix_lock(fd);
	else if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		duplicated(fd, r);
	return r;
}

/* flock locks belong to the open file: the library's sharing of it
 * between opens, and its own descriptor of it (which outlives the
 * application's close), would make them outlive the application's open.
 * The file is left to the kernel first. */
SFS_EXPORT int flock(int fd, int op)
{
	sfs_init();
	if (sfs_live()) {
		if (sfs_fd_is_internal(fd)) {
			errno = EBADF;
			return -1;
		}
		sfs_demote_fd(fd);
	}
	return SFS_REAL(flock)(fd, op);
}

SFS_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	sfs_init();
	return fcntl_impl(SFS_REAL(fcntl), fd, cmd, arg);
}

SFS_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	sfs_init();
	return fcntl_impl(SFS_REAL(fcntl64) ? SFS_REAL(fcntl64) : SFS_REAL(fcntl), fd, cmd, arg);
}
