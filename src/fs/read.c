/* SPDX-License-Identifier: Apache-2.0 */
/* The read path: lock-free, versioned copies (versions.h) from the target's
 * mappings and the staging window; the kernel's answer where the library
 * cannot give one. */
#define _GNU_SOURCE
#include "read.h"

#include <errno.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "../sys/real.h"
#include "flush.h"
#include "../sys/statq.h"
#include "../util/compiler.h"
#include "../util/stats.h"
#include "data.h"
#include "lease.h"
#include "mapcopy.h"
#include "share.h"

/* The kernel's answer to a read, under the writer lock, once the kernel's
 * view is complete: after a fault on the application's buffer or a mapping
 * the budget refuses, and for a read that kept meeting writes of its range
 * (sfs_inode_preadv). One preadv: the read is as atomic as the kernel's. */
static ssize_t kernel_preadv(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off)
{
	sfs_stat_event(SFS_EV_kernel_fallbacks, 1);
	uint64_t total = sfs_iov_total(iov, cnt);
	sfs_inode_lock(in);
	/* With the barrier closed, as every relink: a lock-free reader still
	 * copying out of the window must be done before the window goes (and
	 * a lease drop then gives its store back without closing it). */
	int rc = sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE);
	/* The range's stripes too: overwrites run without the inode lock
	 * (overwrite_unlocked). */
	sfs_ver_lock(&in->ver, off, total);
	ssize_t r = rc ? rc : SFS_REAL(preadv)(in->kfd, iov, cnt, off);
	if (r < 0 && !rc)
		r = -errno;
	sfs_ver_unlock(&in->ver, off, total);
	sfs_inode_unlock(in);
	return r;
}

/* Copies a read may make before it reads under the lock instead: far more
 * than a reader meets unless a writer keeps rewriting the same blocks. */
#define READ_TRIES 256

/* One preadv of a file that is not leased. In a read section: a swap of
 * kfd (sfs_inode_set_kfd, with the barrier closed) waits for the read,
 * which never reads through a descriptor the swap closed (or its number,
 * reused). */
static ssize_t kfd_preadv(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off)
{
	sfs_read_enter(in);
	/* One buffer (a pread, a read): the kernel's pread, which copies no
	 * vector in. */
	ssize_t r = cnt == 1 ? SFS_REAL(pread)(in->kfd, iov[0].iov_base, iov[0].iov_len, off) :
			       SFS_REAL(preadv)(in->kfd, iov, cnt, off);
	int err = errno;
	sfs_read_exit(in);
	return r < 0 ? -err : r;
}

/* A read of a file that is not leased: the kernel's, from the kernel's
 * size (another process may be changing the file), in one call, kept only
 * if no library process wrote its blocks meanwhile (a store of a sharing
 * session is not ordered by the kernel's inode lock: share.h). */
static ssize_t unleased_preadv(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off)
{
	sfs_stat_event(SFS_EV_unleased_ops, 1);
	uint64_t total = sfs_iov_total(iov, cnt);
	struct sfs_share_span sp;
	for (int t = 0; total && t < READ_TRIES; t++) {
		int begun = sfs_share_read_begin(in->dev, in->ino, off, total, &sp);
		if (begun < 0)
			break;	  /* no table here */
		if (begun == 0) { /* a write of the range is running */
			if (t >= 8)
				sfs_share_read_wait(&sp);
			else
				sched_yield();
			continue;
		}
		ssize_t r = kfd_preadv(in, iov, cnt, off);
		if (r <= 0 || sfs_share_read_valid(&sp))
			return r;
		sfs_stat_event(SFS_EV_read_retries, 1);
	}
	if (!total || sfs_share_lock(in->dev, in->ino, off, total, &sp) != 0)
		return kfd_preadv(in, iov, cnt, off);
	sfs_stat_event(SFS_EV_locked_reads, 1);
	ssize_t r = kfd_preadv(in, iov, cnt, off);
	sfs_share_unlock(&sp);
	return r;
}

int64_t sfs_inode_size(struct sfs_inode *in)
{
	/* One read section: the lease cannot go, nor kfd be swapped
	 * (unleased_preadv), while the size is read. */
	sfs_read_enter(in);
	int64_t size = atomic_load_explicit(&in->size, memory_order_acquire);
	if (!sfs_inode_leased(in)) {
		struct stat st;
		size = sfs_fstat_quiet(in->kfd, &st) == 0 ? st.st_size : -errno;
	}
	sfs_read_exit(in);
	return size;
}

/* One copy of [off, off + total of iov) from wherever the bytes are, in
 * one read section: the lease cannot go (nor another process come) between
 * the pieces. *locked: the answer is the kernel's, read under the locks
 * (after a fault): final, though its locks moved the range's versions. */
static inline __attribute__((always_inline)) ssize_t
read_once(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off, bool *locked)
{
	sfs_read_enter(in);
	if (sfs_unlikely(!sfs_inode_leased(in))) {
		sfs_read_exit(in);
		if (!sfs_lease_try(in, false))
			return unleased_preadv(in, iov, cnt, off);
		sfs_read_enter(in);
		if (!sfs_inode_leased(in)) {
			sfs_read_exit(in);
			return unleased_preadv(in, iov, cnt, off);
		}
	}
	/* size first: a size that includes staged bytes implies the window
	 * (staged, base) that holds them is visible too. The lease makes it
	 * the file's size: nobody else can change the file. */
	int64_t size = atomic_load_explicit(&in->size, memory_order_acquire);
	int64_t boundary = sfs_inode_boundary(in);
	int64_t at = off;
	int rc = 0;
	for (int i = 0; i < cnt && at < size && !rc; i++) {
		char *buf = iov[i].iov_base;
		size_t len = (size_t)SFS_MIN((int64_t)iov[i].iov_len, size - at);
		size_t low = at < boundary ? (size_t)SFS_MIN((int64_t)len, boundary - at) : 0;
		if (low)
			rc = sfs_map_read(in, at, buf, low);
		if (!rc && len > low)
			rc = sfs_stage_xfer(&in->stage, at + (int64_t)low, buf + low, len - low, 0);
		at += (int64_t)len;
	}
	sfs_read_exit(in);
	if (rc) {
		*locked = true;
		return kernel_preadv(in, iov, cnt, off);
	}
	return (ssize_t)(at - off);
}

/* The reads whose first copy overlapped a write (or met one running): copy
 * again until a copy saw no write of its range. */
static ssize_t read_again(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off,
			  uint64_t total)
{
	struct sfs_ver_snap snap;
	for (int t = 1; t < READ_TRIES; t++) {
		if ((t & 7) == 0)
			sched_yield(); /* the writer may be waiting for this CPU */
		if (!sfs_ver_read_begin(&in->ver, off, total, &snap))
			continue;
		bool locked = false;
		ssize_t r = read_once(in, iov, cnt, off, &locked);
		if (r <= 0 || locked || sfs_ver_read_valid(&in->ver, &snap))
			return r;
		sfs_stat_event(SFS_EV_read_retries, 1);
	}
	sfs_stat_event(SFS_EV_locked_reads, 1);
	return kernel_preadv(in, iov, cnt, off);
}

/* A versioned read of total bytes: a first copy, and read_again if a
 * write of the range ran meanwhile. Inlined into both entry points (the
 * one-buffer read is the hot one). */
static inline __attribute__((always_inline)) ssize_t
read_versioned(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off, uint64_t total)
{
	struct sfs_ver_snap snap;
	if (sfs_likely(sfs_ver_read_begin(&in->ver, off, total, &snap))) {
		bool locked = false;
		ssize_t r = read_once(in, iov, cnt, off, &locked);
		if (r <= 0 || locked || sfs_ver_read_valid(&in->ver, &snap))
			return r;
		sfs_stat_event(SFS_EV_read_retries, 1);
	}
	return read_again(in, iov, cnt, off, total);
}

ssize_t sfs_inode_preadv(struct sfs_inode *in, const struct iovec *iov, int cnt, int64_t off)
{
	uint64_t total = sfs_iov_total(iov, cnt); /* the caller clamped it to MAX_RW_COUNT */
	return total ? read_versioned(in, iov, cnt, off, total) : 0;
}

/* The same for one buffer, the common case, without the vector's loops. */
ssize_t sfs_inode_pread(struct sfs_inode *in, void *buf, size_t n, int64_t off)
{
	if (n == 0)
		return 0;
	struct iovec one = {buf, SFS_MIN(n, SFS_MAX_RW_COUNT)};
	return read_versioned(in, &one, 1, off, one.iov_len);
}
