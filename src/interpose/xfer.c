/* SPDX-License-Identifier: Apache-2.0 */
/* Calls that move data inside the kernel or reach it by number: sendfile,
 * copy_file_range, splice, ioctl and syscall. The kernel serves them; the
 * library first makes the kernel's view of every managed file involved
 * complete and afterwards re-reads offsets and sizes (kview brackets). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../fs/flush.h"
#include "../fs/inode.h"
#include "../fs/process.h"
#include "wrap.h"

/* The kernel serves these on the application's open files (their access
 * modes, O_APPEND, offsets all matter): the files are left to it first. */
static void both_to_kernel(int in, int out)
{
	sfs_demote_fd(in);
	sfs_demote_fd(out);
}

static ssize_t sendfile_impl(ssize_t (*real)(int, int, off_t *, size_t), int out, int in,
			     off_t *off, size_t n)
{
	sfs_init();
	SFS_HIDE_INTERNAL(in, -1);
	SFS_HIDE_INTERNAL(out, -1);
	both_to_kernel(in, out);
	return sfs_kernel_wrote(out, real(out, in, off, n));
}

SFS_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	sfs_init();
	return sendfile_impl(SFS_REAL(sendfile), out, in, off, n);
}

SFS_ALIAS(sendfile64, sendfile);

SFS_EXPORT ssize_t copy_file_range(int in, off_t *inoff, int out, off_t *outoff, size_t n,
				   unsigned int flags)
{
	sfs_init();
	SFS_HIDE_INTERNAL(in, -1);
	SFS_HIDE_INTERNAL(out, -1);
	both_to_kernel(in, out);
	return sfs_kernel_wrote(out, SFS_REAL(copy_file_range)(in, inoff, out, outoff, n, flags));
}

SFS_EXPORT ssize_t splice(int in, off_t *inoff, int out, off_t *outoff, size_t n,
			  unsigned int flags)
{
	sfs_init();
	SFS_HIDE_INTERNAL(in, -1);
	SFS_HIDE_INTERNAL(out, -1);
	both_to_kernel(in, out);
	return sfs_kernel_wrote(out, SFS_REAL(splice)(in, inoff, out, outoff, n, flags));
}

/* Ioctls that read another file's blocks (clone, dedupe, exchange): every
 * file must be complete in the kernel, and every size re-read after. */
#define SFS_XFS_IOC_EXCHANGE_RANGE_NR 129
static bool is_exchange(unsigned long req)
{
	return _IOC_TYPE(req) == 'X' && _IOC_NR(req) == SFS_XFS_IOC_EXCHANGE_RANGE_NR;
}

static bool touches_other_files(unsigned long req)
{
	return req == FICLONE || req == FICLONERANGE || req == FIDEDUPERANGE || is_exchange(req);
}

static void resync_one(struct sfs_inode *in, void *unused)
{
	(void)unused;
	sfs_inode_lock(in);
	sfs_inode_resync_locked(in);
	sfs_inode_unlock(in);
}

SFS_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (!sfs_active())
		return SFS_REAL(ioctl)(fd, req, arg);
	SFS_HIDE_INTERNAL(fd, -1);
	bool all = touches_other_files(req);
	if (all)
		sfs_flush_all();
	/* The offset too: FIONREAD answers size minus the kernel's offset
	 * (clone, dedupe and exchange take theirs in the argument). */
	struct sfs_kview kv;
	sfs_kview_begin(&kv, fd, !all);
	int r = SFS_REAL(ioctl)(fd, req, arg);
	sfs_kview_end(&kv);
	/* A clone changes fd's file alone (kview_end re-read it) and a dedupe
	 * no file's bytes; an exchange changes the other file too. */
	if (is_exchange(req)) {
		int saved = errno;
		sfs_inode_foreach(resync_one, NULL);
		errno = saved;
	}
	return r;
}

/* syscall(2): the numbers that touch file data or descriptors are routed to
 * the wrappers (fsx calls copy_file_range this way, stress-ng dup3/open).
 * Everything else goes straight to the kernel. A NULL path or buffer where
 * the wrapper's libc declaration says nonnull goes to the kernel too. */
SFS_EXPORT long syscall(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	/* jemalloc opens and reads /proc files with syscall() during its own
	 * init, under its lock: no library init from here (sfs_initialized). */
	static void *early;
	if (!sfs_initialized()) {
		long (*fn)(long, ...) = sfs_early_next("syscall", &early);
		return fn(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	if (!sfs_live())
		return SFS_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	switch (nr) {
	case SYS_read:
		return read((int)a[0], (void *)a[1], (size_t)a[2]);
	case SYS_write:
		return write((int)a[0], (const void *)a[1], (size_t)a[2]);
	case SYS_pread64:
		return pread64((int)a[0], (void *)a[1], (size_t)a[2], (off_t)a[3]);
	case SYS_pwrite64:
		return pwrite64((int)a[0], (const void *)a[1], (size_t)a[2], (off_t)a[3]);
	case SYS_readv:
		return readv((int)a[0], (const struct iovec *)a[1], (int)a[2]);
	case SYS_writev:
		return writev((int)a[0], (const struct iovec *)a[1], (int)a[2]);
	case SYS_lseek:
		return lseek((int)a[0], (off_t)a[1], (int)a[2]);
	case SYS_fsync:
		return fsync((int)a[0]);
	case SYS_fdatasync:
		return fdatasync((int)a[0]);
	case SYS_ftruncate:
		return ftruncate((int)a[0], (off_t)a[1]);
	case SYS_fallocate:
		return fallocate((int)a[0], (int)a[1], (off_t)a[2], (off_t)a[3]);
	case SYS_close:
		return close((int)a[0]);
	case SYS_dup:
		return dup((int)a[0]);
	case SYS_dup2:
		return dup2((int)a[0], (int)a[1]);
	case SYS_dup3:
		return dup3((int)a[0], (int)a[1], (int)a[2]);
	case SYS_open:
		if (!a[0])
			break;
		return open((const char *)a[0], (int)a[1], (mode_t)a[2]);
	case SYS_openat:
		if (!a[1])
			break;
		return openat((int)a[0], (const char *)a[1], (int)a[2], (mode_t)a[3]);
	case SYS_sendfile:
		return sendfile((int)a[0], (int)a[1], (off_t *)a[2], (size_t)a[3]);
	case SYS_copy_file_range:
		return copy_file_range((int)a[0], (off_t *)a[1], (int)a[2], (off_t *)a[3],
				       (size_t)a[4], (unsigned)a[5]);
	case SYS_splice:
		return splice((int)a[0], (off_t *)a[1], (int)a[2], (off_t *)a[3], (size_t)a[4],
			      (unsigned)a[5]);
	case SYS_preadv:
		return preadv((int)a[0], (const struct iovec *)a[1], (int)a[2], (off_t)a[3]);
	case SYS_pwritev:
		return pwritev((int)a[0], (const struct iovec *)a[1], (int)a[2], (off_t)a[3]);
	case SYS_preadv2: /* on 64-bit the offset is the "low" argument */
		return preadv2((int)a[0], (const struct iovec *)a[1], (int)a[2], (off_t)a[3],
			       (int)a[5]);
	case SYS_pwritev2:
		return pwritev2((int)a[0], (const struct iovec *)a[1], (int)a[2], (off_t)a[3],
				(int)a[5]);
	case SYS_sync_file_range:
		return sync_file_range((int)a[0], (off_t)a[1], (off_t)a[2], (unsigned)a[3]);
	case SYS_getdents64:
		return getdents64((int)a[0], (void *)a[1], (size_t)a[2]);
	case SYS_ioctl:
		return ioctl((int)a[0], (unsigned long)a[1], (void *)a[2]);
	case SYS_fcntl:
		return fcntl((int)a[0], (int)a[1], (void *)a[2]);
	case SYS_mmap:
		return (long)mmap((void *)a[0], (size_t)a[1], (int)a[2], (int)a[3], (int)a[4],
				  (off_t)a[5]);
	case SYS_truncate:
		if (!a[0])
			break;
		return truncate((const char *)a[0], (off_t)a[1]);
	case SYS_creat:
		if (!a[0])
			break;
		return creat((const char *)a[0], (mode_t)a[1]);
	case SYS_unlink:
		if (!a[0])
			break;
		return unlink((const char *)a[0]);
	case SYS_unlinkat:
		if (!a[1])
			break;
		return unlinkat((int)a[0], (const char *)a[1], (int)a[2]);
	case SYS_rename:
		if (!a[0] || !a[1])
			break;
		return rename((const char *)a[0], (const char *)a[1]);
	case SYS_renameat:
		if (!a[1] || !a[3])
			break;
		return renameat((int)a[0], (const char *)a[1], (int)a[2], (const char *)a[3]);
	case SYS_renameat2:
		if (!a[1] || !a[3])
			break;
		return renameat2((int)a[0], (const char *)a[1], (int)a[2], (const char *)a[3],
				 (unsigned)a[4]);
	case SYS_close_range:
		return close_range((unsigned)a[0], (unsigned)a[1], (int)a[2]);
	case SYS_utimensat:
		return utimensat((int)a[0], (const char *)a[1], (const struct timespec *)a[2],
				 (int)a[3]);
	case SYS_syncfs:
		return syncfs((int)a[0]);
	case SYS_flock:
		return flock((int)a[0], (int)a[1]);
	case SYS_exit_group:
		_exit((int)a[0]);
	case SYS_fstat:
		if (!a[1])
			break;
		return fstat((int)a[0], (struct stat *)a[1]);
	case SYS_newfstatat:
		if (!a[1] || !a[2])
			break;
		return fstatat((int)a[0], (const char *)a[1], (struct stat *)a[2], (int)a[3]);
	case SYS_statx:
		if (!a[1] || !a[4])
			break;
		return statx((int)a[0], (const char *)a[1], (int)a[2], (unsigned)a[3],
			     (struct statx *)a[4]);
	default:
		break;
	}
	/* Not routed (or a NULL the wrappers' nonnull declarations exclude:
	 * the kernel answers EFAULT itself). */
	return SFS_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
