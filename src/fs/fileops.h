/* SPDX-License-Identifier: Apache-2.0 */
/* POSIX semantics of the calls the library serves, on open-file objects:
 * access-mode checks, offsets, O_APPEND, the kernel's argument checks and
 * their errno, in the kernel's order. Every function returns a count or 0
 * on success and -errno on failure; only the wrappers touch errno. */
#ifndef SFS_FS_FILEOPS_H
#define SFS_FS_FILEOPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "file.h"
#include "share.h"

/* After the kernel opened fd with flags (O_CLOEXEC included as asked):
 * manage it if it is a regular file on the managed file system. Preserves
 * errno. */
void sfs_manage(int fd, int flags);

/* The same for a descriptor opened earlier, whose offset is pos now (a
 * descriptor taken back after a fork, forkwatch.h). */
void sfs_manage_at(int fd, int flags, int64_t pos);

/* Manages the pending descriptor fd (fdtable.h) whose promotion
 * sfs_fd_pending_begin gave the caller. Preserves errno. */
void sfs_manage_pending(int fd);

/* A call of pending fd while sharing sessions run (sfs_share_raw_begin
 * said SFS_RAW_ASK): whether it may still go to the kernel, none running
 * on its file; false: it is uncounted, and the caller manages fd. The
 * file is learnt once per descriptor (an fstat), unless its open knew it. */
bool sfs_pending_may_go(int fd);

ssize_t sfs_file_read(struct sfs_file *f, void *buf, size_t n);
ssize_t sfs_file_write(struct sfs_file *f, const void *buf, size_t n);
ssize_t sfs_file_pread(struct sfs_file *f, void *buf, size_t n, int64_t off);
ssize_t sfs_file_pwrite(struct sfs_file *f, const void *buf, size_t n, int64_t off);

/* readv/writev family. off < 0 means "at the file offset, and advance it"
 * (readv, writev, and preadv2/pwritev2 with offset -1). rwf: RWF_* flags.
 * Returns -ENOTSUP when rwf holds a flag the library does not serve (the
 * wrapper then hands the call to the kernel). */
ssize_t sfs_file_readv(struct sfs_file *f, const struct iovec *iov, int cnt, int64_t off, int rwf);
ssize_t sfs_file_writev(struct sfs_file *f, const struct iovec *iov, int cnt, int64_t off, int rwf);

int64_t sfs_file_lseek(struct sfs_file *f, int64_t off, int whence);

/* close(fd) of a managed descriptor (already removed from the table):
 * relinks, closes, and returns the real close's result or the relink error. */
int sfs_file_close(int fd, struct sfs_file *f);

/* Kernel view bracket: around a call the library passes to the kernel on a
 * managed descriptor. begin relinks and, when the call uses the file offset,
 * writes it back; end reads the offset back and refreshes the size. */
struct sfs_kview {
	struct sfs_file *f;
	int fd;
	bool uses_pos;
	bool holding; /* the blocks below, of a file other processes share */
	struct sfs_share_span held;
};
void sfs_kview_begin(struct sfs_kview *kv, int fd, bool uses_pos);
void sfs_kview_end(struct sfs_kview *kv);

/* The kernel may have changed in's file behind the library (a kernel view
 * call, a write through stdio): its size learnt again, and in sync and
 * strict modes the log records retired (durable now; none replayed over
 * the change). */
void sfs_inode_kernel_wrote(struct sfs_inode *in);

/* Between the two: the kernel's fallocate(mode, off, len) is about to
 * change bytes of the file (punch, zero, collapse, insert): if it is not
 * leased, the locks of those blocks (of every block from off on when the
 * call moves them) are held until sfs_kview_end, so that no store of
 * another library process mixes with the change (share.h). */
void sfs_kview_hold_fallocate(struct sfs_kview *kv, int mode, int64_t off, int64_t len);

/* Whether [buf, buf+n) can be a user buffer at all (the kernel's
 * access_ok): false gives EFAULT before anything else happens. */
bool sfs_user_range_ok(const void *buf, size_t n);

#endif
