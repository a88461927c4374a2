/* SPDX-License-Identifier: Apache-2.0 */
/* read/write/pread/pwrite and their fortified forms. */
#define _GNU_SOURCE
#include <unistd.h>

#include "wrap.h"

/* The _FORTIFY_SOURCE entry points (declared only inside glibc's headers). */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);

SFS_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	bool pending;
	struct sfs_file *f = sfs_wrap_data(fd, false, &pending);
	if (!f) {
		SFS_HIDE_UNMANAGED(fd, pending, -1);
		return sfs_wrap_pending_done(fd, pending, SFS_REAL(read)(fd, buf, n));
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_read);
	SFS_FINISH(f, SFS_CALL_read, t0, SFS_AT_KPOS(f, fd, sfs_file_read(f, buf, n)),
		   SFS_REAL(read)(fd, buf, n));
}

SFS_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen) /* let libc report the overflow and abort, as it would */
		return SFS_REAL(__read_chk)(fd, buf, n, buflen);
	return read(fd, buf, n);
}

SFS_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	bool pending;
	struct sfs_file *f = sfs_wrap_data(fd, false, &pending);
	if (!f) {
		SFS_HIDE_UNMANAGED(fd, pending, -1);
		return sfs_wrap_pending_done(fd, pending, SFS_REAL(pread)(fd, buf, n, off));
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_pread);
	SFS_FINISH(f, SFS_CALL_pread, t0, sfs_file_pread(f, buf, n, off),
		   SFS_REAL(pread)(fd, buf, n, off));
}

SFS_ALIAS(pread64, pread);

SFS_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	if (n > buflen)
		return SFS_REAL(__pread_chk)(fd, buf, n, off, buflen);
	return pread(fd, buf, n, off);
}

SFS_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	if (n > buflen)
		return SFS_REAL(__pread64_chk)(fd, buf, n, off, buflen);
	return pread64(fd, buf, n, off);
}

SFS_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	bool pending;
	struct sfs_file *f = sfs_wrap_data(fd, true, &pending);
	if (!f) {
		SFS_HIDE_UNMANAGED(fd, pending, -1);
		return sfs_wrap_pending_done(fd, pending,
					     sfs_kernel_wrote(fd, SFS_REAL(write)(fd, buf, n)));
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_write);
	SFS_FINISH(f, SFS_CALL_write, t0, SFS_AT_KPOS(f, fd, sfs_file_write(f, buf, n)),
		   sfs_kernel_wrote(fd, SFS_REAL(write)(fd, buf, n)));
}

SFS_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	bool pending;
	struct sfs_file *f = sfs_wrap_data(fd, true, &pending);
	if (!f) {
		SFS_HIDE_UNMANAGED(fd, pending, -1);
		return sfs_wrap_pending_done(
			fd, pending, sfs_kernel_wrote(fd, SFS_REAL(pwrite)(fd, buf, n, off)));
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_pwrite);
	SFS_FINISH(f, SFS_CALL_pwrite, t0, sfs_file_pwrite(f, buf, n, off),
		   sfs_kernel_wrote(fd, SFS_REAL(pwrite)(fd, buf, n, off)));
}

SFS_ALIAS(pwrite64, pwrite);
