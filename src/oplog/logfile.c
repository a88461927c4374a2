/* SPDX-License-Identifier: Apache-2.0 */
/* The operation log's file: its records' writes, its header, and making or
 * reusing one in <root>/.splitfs (oplog.c decides when). */
#define _GNU_SOURCE
#include "logfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/self.h"
#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/crc32c.h"
#include "../util/dirscan.h"

#define MAX_IOV 64

/* The application's RLIMIT_FSIZE applies to every write(2), the library's
 * into its log too (SIGXFSZ, EFBIG past it). Stores into a mapping of the
 * pre-sized log are not writes in that sense: past the limit a record goes
 * that way, made durable with msync. */
static int write_mapped(int fd, const struct iovec *v, int n, uint64_t off, size_t want)
{
	uint64_t start = off & ~(uint64_t)(SFS_BLOCK - 1) /* x86-64 pages */;
	size_t len = (size_t)(off + want - start);
	char *m = SFS_REAL(mmap)(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
	if (m == MAP_FAILED)
		return -errno;
	char *p = m + (off - start);
	for (int i = 0; i < n; i++) {
		memcpy(p, v[i].iov_base, v[i].iov_len);
		p += v[i].iov_len;
	}
	int rc = msync(m, len, MS_SYNC) == 0 ? 0 : -errno;
	munmap(m, len);
	return rc;
}

/* Writes a record at off with one synchronous write: entry, payload, zero
 * padding to the next 64 bytes. The CRC covers entry and payload. */
int sfs_logfile_write_record(int fd, struct sfs_pmem_map *pm, struct sfs_log_entry *e,
			     const struct iovec *iov, int cnt, uint64_t off)
{
	static const char zeros[SFS_LOG_UNIT];
	uint32_t c;
	struct sfs_log_entry z = *e;
	z.crc = 0;
	c = sfs_crc32c_update(~0u, &z, sizeof(z));
	for (int i = 0; i < cnt; i++)
		c = sfs_crc32c_update(c, iov[i].iov_base, iov[i].iov_len);
	e->crc = ~c;
	struct iovec v[MAX_IOV + 2];
	int n = 0;
	v[n++] = (struct iovec){e, sizeof(*e)};
	for (int i = 0; i < cnt; i++)
		v[n++] = iov[i];
	size_t pad = (size_t)(sfs_log_record_len(e->payload) - SFS_LOG_UNIT - e->payload);
	if (pad)
		v[n++] = (struct iovec){(void *)zeros, pad};
	size_t want = (size_t)sfs_log_record_len(e->payload);
	if (pm) { /* DAX: stores and one fence, no system call */
		sfs_pmem_writev(pm, off, v, n);
		return 0;
	}
	uint64_t lim = atomic_load_explicit(&sfs_g.fsize_limit, memory_order_relaxed);
	if (sfs_unlikely(off + want > lim))
		return write_mapped(fd, v, n, off, want);
	ssize_t w = SFS_REAL(pwritev2)(fd, v, n, (off_t)off, RWF_DSYNC);
	if (w < 0)
		return -errno;
	return (size_t)w == want ? 0 : -EIO;
}

int sfs_logfile_write_header(int fd, uint64_t gen, uint64_t size, uint64_t set, unsigned lane)
{
	struct sfs_log_entry h = {
		.op = SFS_LOG_HEADER,
		.version = 1,
		.payload = sizeof(struct sfs_log_ident),
		.gen = gen,
		.off = SFS_LOG_MAGIC,
		.arg = size,
		.pid = (uint64_t)sfs_self_pid(),
	};
	struct sfs_log_ident id;
	memset(&id, 0, sizeof(id));
	memcpy(id.boot_id, sfs_g.boot_id, sizeof(id.boot_id));
	id.mnt_id = sfs_g.mnt_id;
	id.set = set;
	id.lane = lane;
	struct iovec v = {&id, sizeof(id)};
	return sfs_logfile_write_record(fd, NULL, &h, &v, 1, 0);
}

uint64_t sfs_logfile_read_gen(int fd)
{
	struct {
		struct sfs_log_entry e;
		struct sfs_log_ident id;
	} h;
	if (SFS_REAL(pread)(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.e.op != SFS_LOG_HEADER || h.e.off != SFS_LOG_MAGIC || h.e.payload != sizeof(h.id) ||
	    h.e.crc != sfs_log_crc(&h.e, &h.id))
		return 0;
	return h.e.gen;
}

uint64_t sfs_logfile_size(void)
{
	uint64_t lim = atomic_load(&sfs_g.fsize_limit);
	uint64_t want = sfs_g.opt.log_size;
	if (!want)
		want = sfs_g.opt.mode == SFS_MODE_POSIX ? SFS_LOG_SIZE_POSIX : SFS_LOG_SIZE_DURABLE;
	if (want <= lim)
		return want;
	lim &= ~(uint64_t)((1 << 20) - 1);
	return lim >= (1 << 20) ? lim : 0;
}

/* Whether fd is a log this process may reuse: a regular file of its user's,
 * private (no group or other access), one link, exactly the size wanted. */
static bool reusable(int fd, uint64_t size)
{
	struct stat st;
	return SFS_REAL(fstat)(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == sfs_g.euid &&
	       !(st.st_mode & 077) && st.st_nlink == 1 && (uint64_t)st.st_size == size;
}

/* It is locked before it is renamed to the new name, so no recovery ever
 * sees it named and unlocked; the rename is the claim. */
int sfs_logfile_claim_free(const char *mine, uint64_t size)
{
	int priv = sfs_privdir();
	int dfd = SFS_REAL(openat)(priv, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	struct sfs_dirscan scan;
	sfs_dirscan_start(&scan, dfd, sfs_kernel_getdents64);
	int fd = -1;
	const struct dirent64 *de;
	while (fd < 0 && (de = sfs_dirscan_next(&scan)) != NULL) {
		if (strncmp(de->d_name, "log.free.", 9) != 0)
			continue;
		fd = SFS_REAL(openat)(priv, de->d_name,
				      O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		struct stat st, named;
		if (!reusable(fd, size) || SFS_REAL(flock)(fd, LOCK_EX | LOCK_NB) != 0 ||
		    SFS_REAL(renameat)(priv, de->d_name, priv, mine) != 0 ||
		    SFS_REAL(fstat)(fd, &st) != 0 ||
		    SFS_REAL(fstatat)(priv, mine, &named, AT_SYMLINK_NOFOLLOW) != 0 ||
		    named.st_ino != st.st_ino) {
			/* Not ours, taken by another process meanwhile, or the
			 * name moved to another file: leave it. */
			SFS_REAL(close)(fd);
			fd = -1;
		}
	}
	SFS_REAL(close)(dfd);
	return fd;
}

/* Zero-filled, so synchronous writes into it change no metadata. A
 * recovery never sees a log that is named and unlocked while its process
 * lives. */
int sfs_logfile_create(const char *name, uint64_t size, uint64_t set, unsigned lane)
{
	int priv = sfs_privdir();
	int fd = SFS_REAL(openat)(priv, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	char tmp[80] = "";
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* No O_TMPFILE here: a name no recovery looks at, then renamed. */
		snprintf(tmp, sizeof(tmp), "tmp.%s", name);
		fd = SFS_REAL(openat)(priv, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return -errno;
	/* Extents in 2 MiB-aligned pieces (XFS's extent size hint; elsewhere
	 * refused, and nothing changes): on DAX, a 2 MiB-aligned mapping of
	 * them takes one page fault per 2 MiB instead of one per 4 KiB. */
	struct fsxattr xa;
	if (SFS_REAL(ioctl)(fd, FS_IOC_FSGETXATTR, &xa) == 0) {
		xa.fsx_xflags |= FS_XFLAG_EXTSIZE;
		xa.fsx_extsize = 2u << 20;
		SFS_REAL(ioctl)(fd, FS_IOC_FSSETXATTR, &xa);
	}
	static const char zeros[1 << 16];
	for (uint64_t off = 0; off < size; off += sizeof(zeros)) {
		size_t n = (size_t)SFS_MIN((uint64_t)sizeof(zeros), size - off);
		if (SFS_REAL(pwrite)(fd, zeros, n, (off_t)off) != (ssize_t)n)
			goto fail;
	}
	if (SFS_REAL(flock)(fd, LOCK_EX | LOCK_NB) != 0 ||
	    sfs_logfile_write_header(fd, 1, size, set, lane) != 0 || SFS_REAL(fsync)(fd) != 0)
		goto fail;
	char proc[48];
	snprintf(proc, sizeof(proc), "/proc/thread-self/fd/%d", fd);
	if (tmp[0] ? SFS_REAL(renameat)(priv, tmp, priv, name) != 0 :
		     SFS_REAL(linkat)(AT_FDCWD, proc, priv, name, AT_SYMLINK_FOLLOW) != 0)
		goto fail;
	tmp[0] = '\0';
	/* The name too (priv_dirfd is O_PATH, which fsync refuses). */
	int dfd = SFS_REAL(openat)(priv, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		goto fail;
	int drc = SFS_REAL(fsync)(dfd);
	SFS_REAL(close)(dfd);
	if (drc != 0)
		goto fail;
	return fd;
fail:;
	int rc = -errno;
	SFS_REAL(close)(fd);
	if (tmp[0])
		SFS_REAL(unlinkat)(priv, tmp, 0);
	return rc ? rc : -EIO;
}
