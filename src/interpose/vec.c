/* SPDX-License-Identifier: Apache-2.0 */
/* readv/writev, preadv/pwritev and the v2 forms with RWF_* flags. */
#define _GNU_SOURCE
#include <sys/uio.h>

#include "../fs/process.h"
#include "wrap.h"

SFS_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	bool pending;
	struct sfs_file *f = sfs_wrap_data(fd, false, &pending);
	if (!f) {
		SFS_HIDE_UNMANAGED(fd, pending, -1);
		return sfs_wrap_pending_done(fd, pending, SFS_REAL(readv)(fd, iov, cnt));
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_readv);
	SFS_FINISH(f, SFS_CALL_readv, t0, SFS_AT_KPOS(f, fd, sfs_file_readv(f, iov, cnt, -1, 0)),
		   SFS_REAL(readv)(fd, iov, cnt));
}

SFS_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	bool pending;
	struct sfs_file *f = sfs_wrap_data(fd, true, &pending);
	if (!f) {
		SFS_HIDE_UNMANAGED(fd, pending, -1);
		return sfs_wrap_pending_done(fd, pending,
					     sfs_kernel_wrote(fd, SFS_REAL(writev)(fd, iov, cnt)));
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_writev);
	SFS_FINISH(f, SFS_CALL_writev, t0, SFS_AT_KPOS(f, fd, sfs_file_writev(f, iov, cnt, -1, 0)),
		   sfs_kernel_wrote(fd, SFS_REAL(writev)(fd, iov, cnt)));
}

/* preadv/pwritev take a non-negative offset (-1 is EINVAL, not "current");
 * preadv2/pwritev2 accept -1 for the file offset. */
static long readv_at(struct sfs_file *f, const struct iovec *iov, int cnt, off_t off, int rwf,
		     bool v2)
{
	if (off < (v2 ? -1 : 0))
		return -EINVAL;
	return sfs_file_readv(f, iov, cnt, off, rwf);
}

static long writev_at(struct sfs_file *f, const struct iovec *iov, int cnt, off_t off, int rwf,
		      bool v2)
{
	if (off < (v2 ? -1 : 0))
		return -EINVAL;
	return sfs_file_writev(f, iov, cnt, off, rwf);
}

SFS_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	bool pending;
	struct sfs_file *f = sfs_wrap_data(fd, false, &pending);
	if (!f) {
		SFS_HIDE_UNMANAGED(fd, pending, -1);
		return sfs_wrap_pending_done(fd, pending, SFS_REAL(preadv)(fd, iov, cnt, off));
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_readv);
	SFS_FINISH(f, SFS_CALL_readv, t0, readv_at(f, iov, cnt, off, 0, false),
		   SFS_REAL(preadv)(fd, iov, cnt, off));
}

SFS_ALIAS(preadv64, preadv);

SFS_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	bool pending;
	struct sfs_file *f = sfs_wrap_data(fd, true, &pending);
	if (!f) {
		SFS_HIDE_UNMANAGED(fd, pending, -1);
		return sfs_wrap_pending_done(
			fd, pending, sfs_kernel_wrote(fd, SFS_REAL(pwritev)(fd, iov, cnt, off)));
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_writev);
	SFS_FINISH(f, SFS_CALL_writev, t0, writev_at(f, iov, cnt, off, 0, false),
		   sfs_kernel_wrote(fd, SFS_REAL(pwritev)(fd, iov, cnt, off)));
}

SFS_ALIAS(pwritev64, pwritev);

/* A v2 call with RWF_* flags the library does not serve (-ENOTSUP) goes to
 * the kernel, which then serves the file (process.h). */
#define V2_KERNEL(r, call)                                                                         \
	do {                                                                                       \
		if ((r) == -ENOTSUP) {                                                             \
			sfs_demote_inode(f->inode);                                                \
			sfs_wrap_put(f);                                                           \
			return call;                                                               \
		}                                                                                  \
	} while (0)

SFS_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
	bool pending;
	struct sfs_file *f = sfs_wrap_data(fd, false, &pending);
	if (!f) {
		SFS_HIDE_UNMANAGED(fd, pending, -1);
		return sfs_wrap_pending_done(fd, pending,
					     SFS_REAL(preadv2)(fd, iov, cnt, off, rwf));
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_readv);
	long r = off == -1 ? SFS_AT_KPOS(f, fd, readv_at(f, iov, cnt, off, rwf, true)) :
			     readv_at(f, iov, cnt, off, rwf, true);
	V2_KERNEL(r, SFS_REAL(preadv2)(fd, iov, cnt, off, rwf));
	SFS_FINISH(f, SFS_CALL_readv, t0, r, SFS_REAL(preadv2)(fd, iov, cnt, off, rwf));
}

SFS_ALIAS(preadv64v2, preadv2);

SFS_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
	bool pending;
	struct sfs_file *f = sfs_wrap_data(fd, true, &pending);
	if (!f) {
		SFS_HIDE_UNMANAGED(fd, pending, -1);
		return sfs_wrap_pending_done(
			fd, pending,
			sfs_kernel_wrote(fd, SFS_REAL(pwritev2)(fd, iov, cnt, off, rwf)));
	}
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_writev);
	long r = off == -1 ? SFS_AT_KPOS(f, fd, writev_at(f, iov, cnt, off, rwf, true)) :
			     writev_at(f, iov, cnt, off, rwf, true);
	V2_KERNEL(r, sfs_kernel_wrote(fd, SFS_REAL(pwritev2)(fd, iov, cnt, off, rwf)));
	SFS_FINISH(f, SFS_CALL_writev, t0, r,
		   sfs_kernel_wrote(fd, SFS_REAL(pwritev2)(fd, iov, cnt, off, rwf)));
}

SFS_ALIAS(pwritev64v2, pwritev2);
