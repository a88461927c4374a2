/* SPDX-License-Identifier: Apache-2.0 */
/* readv/writev, preadv/pwritev and the v2 forms with RWF_* flags. */
#define _GNU_SOURCE
#include <sys/uio.h>

#include "wrap.h"

/* A v2 call with flags the library does not serve goes to the kernel, after
 * the kernel's view of the file is made complete. */
#define KERNEL_V2(call, fd, iov, cnt, off, rwf)                                                    \
	do {                                                                                       \
		struct sfs_kview kv;                                                               \
		sfs_file_put(f);                                                                   \
		sfs_kview_begin(&kv, fd, (off) < 0);                                               \
		ssize_t r_ = sfs_real.call(fd, iov, cnt, off, rwf);                                \
		sfs_kview_end(&kv);                                                                \
		return r_;                                                                         \
	} while (0)

SFS_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return sfs_real.readv(fd, iov, cnt);
	uint64_t t0 = sfs_stat_start();
	return sfs_wrap_done(f, SFS_CALL_readv, t0, sfs_file_readv(f, iov, cnt, -1, 0));
}

SFS_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return sfs_real.writev(fd, iov, cnt);
	uint64_t t0 = sfs_stat_start();
	return sfs_wrap_done(f, SFS_CALL_writev, t0, sfs_file_writev(f, iov, cnt, -1, 0));
}

/* preadv/pwritev take a non-negative offset; -1 is EINVAL, not "current". */
static long positioned_readv(struct sfs_file *f, const struct iovec *iov, int cnt, off_t off)
{
	return off < 0 ? -EINVAL : sfs_file_readv(f, iov, cnt, off, 0);
}

static long positioned_writev(struct sfs_file *f, const struct iovec *iov, int cnt, off_t off)
{
	return off < 0 ? -EINVAL : sfs_file_writev(f, iov, cnt, off, 0);
}

SFS_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return sfs_real.preadv(fd, iov, cnt, off);
	uint64_t t0 = sfs_stat_start();
	return sfs_wrap_done(f, SFS_CALL_readv, t0, positioned_readv(f, iov, cnt, off));
}

SFS_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off_t off)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return sfs_real.preadv64(fd, iov, cnt, off);
	uint64_t t0 = sfs_stat_start();
	return sfs_wrap_done(f, SFS_CALL_readv, t0, positioned_readv(f, iov, cnt, off));
}

SFS_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return sfs_real.pwritev(fd, iov, cnt, off);
	uint64_t t0 = sfs_stat_start();
	return sfs_wrap_done(f, SFS_CALL_writev, t0, positioned_writev(f, iov, cnt, off));
}

SFS_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return sfs_real.pwritev64(fd, iov, cnt, off);
	uint64_t t0 = sfs_stat_start();
	return sfs_wrap_done(f, SFS_CALL_writev, t0, positioned_writev(f, iov, cnt, off));
}

/* preadv2/pwritev2: offset -1 means the file offset; other negatives EINVAL. */
static long v2_off_check(off_t off)
{
	return off < -1 ? -EINVAL : 0;
}

SFS_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return sfs_real.preadv2(fd, iov, cnt, off, rwf);
	uint64_t t0 = sfs_stat_start();
	long r = v2_off_check(off);
	if (!r)
		r = sfs_file_readv(f, iov, cnt, off, rwf);
	if (r == -ENOTSUP)
		KERNEL_V2(preadv2, fd, iov, cnt, off, rwf);
	return sfs_wrap_done(f, SFS_CALL_readv, t0, r);
}

SFS_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return sfs_real.preadv64v2(fd, iov, cnt, off, rwf);
	uint64_t t0 = sfs_stat_start();
	long r = v2_off_check(off);
	if (!r)
		r = sfs_file_readv(f, iov, cnt, off, rwf);
	if (r == -ENOTSUP)
		KERNEL_V2(preadv64v2, fd, iov, cnt, off, rwf);
	return sfs_wrap_done(f, SFS_CALL_readv, t0, r);
}

SFS_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return sfs_real.pwritev2(fd, iov, cnt, off, rwf);
	uint64_t t0 = sfs_stat_start();
	long r = v2_off_check(off);
	if (!r)
		r = sfs_file_writev(f, iov, cnt, off, rwf);
	if (r == -ENOTSUP)
		KERNEL_V2(pwritev2, fd, iov, cnt, off, rwf);
	return sfs_wrap_done(f, SFS_CALL_writev, t0, r);
}

SFS_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off, int rwf)
{
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return sfs_real.pwritev64v2(fd, iov, cnt, off, rwf);
	uint64_t t0 = sfs_stat_start();
	long r = v2_off_check(off);
	if (!r)
		r = sfs_file_writev(f, iov, cnt, off, rwf);
	if (r == -ENOTSUP)
		KERNEL_V2(pwritev64v2, fd, iov, cnt, off, rwf);
	return sfs_wrap_done(f, SFS_CALL_writev, t0, r);
}
