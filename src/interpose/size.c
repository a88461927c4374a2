/* SPDX-License-Identifier: Apache-2.0 */
/* File offset and size: lseek, ftruncate/truncate, fallocate. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fs/flush.h"
#include "../fs/inode.h"
#include "../oplog/oplog.h"
#include "wrap.h"

SFS_EXPORT off_t lseek(int fd, off_t off, int whence)
{
	SFS_HIDE_INTERNAL(fd, -1);
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return SFS_REAL(lseek)(fd, off, whence);
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_lseek);
	SFS_FINISH(f, SFS_CALL_lseek, t0, SFS_AT_KPOS(f, fd, sfs_file_lseek(f, off, whence)),
		   SFS_REAL(lseek)(fd, off, whence));
}

SFS_ALIAS(lseek64, lseek);

static int ftruncate_impl(int (*real)(int, off_t), int fd, off_t len)
{
	SFS_HIDE_INTERNAL(fd, -1);
	struct sfs_file *f = sfs_wrap_file(fd);
	if (!f)
		return (int)sfs_kernel_wrote(fd, real(fd, len));
	uint64_t t0 = sfs_stat_call_start(SFS_CALL_truncate);
	/* The kernel's open file may be shared with a writable open
	 * (inode.h): the application's own access mode decides, as
	 * do_sys_ftruncate does (EINVAL, after EBADF and the length). */
	long r = len < 0	       ? -EINVAL :
		 !sfs_file_writable(f) ? -EINVAL :
					 sfs_inode_truncate(f->inode, fd, NULL, len);
	SFS_FINISH(f, SFS_CALL_truncate, t0, r, (int)sfs_kernel_wrote(fd, real(fd, len)));
}

SFS_EXPORT int ftruncate(int fd, off_t len)
{
	sfs_init();
	return ftruncate_impl(SFS_REAL(ftruncate), fd, len);
}

SFS_ALIAS(ftruncate64, ftruncate);

/* Sync/strict, a file this process does not have open: the kernel zeroes
 * the tail of the new last block before the new size is in its journal, so
 * a crash in between would leave neither state. Opened for the time of the
 * call, the file is truncated the library's way (the TRUNCATE record first,
 * which recovery redoes), then closed (durable, the record retired).
 * SFS_E_KERNEL when it cannot be opened for writing. */
static long truncate_logged(const char *path, off_t len)
{
	int fd = SFS_REAL(open)(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return SFS_E_KERNEL;
	sfs_manage(fd, O_WRONLY | O_CLOEXEC);
	struct sfs_file *f = sfs_fd_get(fd);
	long r = f ? sfs_inode_truncate(f->inode, fd, NULL, len) : SFS_E_KERNEL;
	if (f)
		sfs_file_put(f);
	f = sfs_fd_remove(fd);
	int c = f ? sfs_file_close(fd, f) : SFS_REAL(close)(fd);
	if (r == 0 && c != 0)
		r = -errno;
	return r;
}

/* truncate(path) of a file this process has open: relink first. */
static int truncate_impl(int (*real)(const char *, off_t), const char *path, off_t len)
{
	struct stat st;
	/* This process may stage data for the file, or (sync, strict) hold log
	 * records of it: then the library truncates it (sfs_inode_truncate). */
	bool mine = sfs_active() && (sfs_inode_staged_count() > 0 || sfs_metasync_on()) &&
		    SFS_REAL(stat)(path, &st) == 0;
	struct sfs_inode *in = mine ? sfs_inode_find(st.st_dev, st.st_ino) : NULL;
	long r = SFS_E_KERNEL;
	if (in) {
		r = sfs_inode_truncate(in, -1, path, len);
		sfs_inode_put(in);
	} else if (mine && S_ISREG(st.st_mode) && st.st_dev == sfs_g.root_dev && sfs_oplog_on()) {
		r = truncate_logged(path, len);
	}
	if (r != SFS_E_KERNEL)
		return (int)sfs_ret(r);
	int k = real(path, len);
	SFS_META_DURABLE(k, sfs_metasync_inode(AT_FDCWD, path, 0));
	return k;
}

SFS_EXPORT int truncate(const char *path, off_t len)
{
	sfs_wake();
	return truncate_impl(SFS_REAL(truncate), path, len);
}

SFS_ALIAS(truncate64, truncate);

/* fallocate changes blocks and maybe the size: the kernel does it, on a
 * complete view of the file, and the library re-reads the size after. */
static int fallocate_impl(int (*real)(int, int, off_t, off_t), int fd, int mode, off_t off,
			  off_t len)
{
	SFS_HIDE_INTERNAL(fd, -1);
	struct sfs_kview kv;
	sfs_init();
	sfs_kview_begin(&kv, fd, false);
	if (kv.f && !sfs_file_writable(kv.f) && off >= 0 && len > 0) {
		/* The application's access mode, not the shared open file's. */
		sfs_kview_end(&kv);
		errno = EBADF;
		return -1;
	}
	sfs_kview_hold_fallocate(&kv, mode, off, len);
	int r = (int)sfs_kernel_wrote(fd, real(fd, mode, off, len));
	sfs_kview_end(&kv);
	return r;
}

SFS_EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	sfs_init();
	return fallocate_impl(SFS_REAL(fallocate), fd, mode, off, len);
}

SFS_ALIAS(fallocate64, fallocate);

/* posix_fallocate returns an error number instead of setting errno. */
static int posix_fallocate_impl(int (*real)(int, off_t, off_t), int fd, off_t off, off_t len)
{
	if (sfs_fd_is_internal(fd))
		return EBADF; /* an error number, not errno */
	struct sfs_kview kv;
	sfs_kview_begin(&kv, fd, false);
	if (kv.f && !sfs_file_writable(kv.f) && off >= 0 && len > 0) {
		sfs_kview_end(&kv);
		return EBADF;
	}
	int r = real(fd, off, len);
	if (r == 0) {
		int saved = errno;
		if (sfs_kernel_wrote(fd, 0) < 0)
			r = errno;
		errno = saved;
	}
	sfs_kview_end(&kv);
	return r;
}

SFS_EXPORT int posix_fallocate(int fd, off_t off, off_t len)
{
	sfs_init();
	return posix_fallocate_impl(SFS_REAL(posix_fallocate), fd, off, len);
}

SFS_ALIAS(posix_fallocate64, posix_fallocate);
