/* SPDX-License-Identifier: Apache-2.0 */
/* stdio. glibc's FILE functions reach the kernel through internal calls no
 * interposer sees, on an open file of their own: the kernel serves it. A
 * managed descriptor handed to fdopen is left to the kernel (demoted). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../fs/flush.h"
#include "../fs/inode.h"
#include "../fs/process.h"
#include "../sys/statq.h"
#include "stdio_out.h"
#include "wrap.h"

/* The open(2) flags of a stdio mode: what matters here is O_CREAT. */
static int mode_flags(const char *mode)
{
	if (!mode || mode[0] == 'r')
		return mode && strchr(mode, '+') ? O_RDWR : O_RDONLY;
	return O_CREAT | (strchr(mode, 'x') ? O_EXCL : 0) | O_WRONLY;
}

/* Before fopen: whether the open will create the file, when that must be
 * made durable (sync and strict modes). Staged data of the file needs no
 * care here: stdio's open is a second open file of it, which breaks this
 * process's lease (the window relinked) and keeps the library on the
 * kernel's path for that file while the stream is open (lease.h). */
static bool before_open(const char *path, const char *mode)
{
	sfs_wake();
	return sfs_metasync_on() && sfs_metasync_will_create(AT_FDCWD, path, mode_flags(mode));
}

/* In sync and strict modes a stream that writes makes its data durable at
 * fflush and fclose (stdio's writes reach the kernel unseen). */
static FILE *handed_to_stdio(FILE *fp, const char *mode)
{
	bool reads_only = mode && mode[0] == 'r' && !strchr(mode, '+');
	if (!fp || !sfs_live() || !sfs_metasync_on() || reads_only)
		return fp;
	int saved = errno;
	struct stat st;
	int fd = fileno(fp);
	if (fd >= 0 && sfs_fstat_quiet(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_dev == sfs_g.root_dev)
		sfs_fd_set_dsync(fd, true);
	errno = saved;
	return fp;
}

/* fopen that created its file: the name durable too (sync, strict). */
static FILE *opened(FILE *fp, const char *mode, const char *path, bool creating)
{
	fp = handed_to_stdio(fp, mode);
	if (fp && creating) {
		int rc = sfs_metasync_parent(AT_FDCWD, path);
		if (rc < 0) {
			fclose(fp);
			errno = -rc;
			return NULL;
		}
	}
	return fp;
}

SFS_EXPORT FILE *fopen(const char *path, const char *mode)
{
	bool creating = before_open(path, mode);
	return opened(SFS_FD_RETRY(FILE *, NULL, SFS_REAL(fopen)(path, mode)), mode, path,
		      creating);
}

SFS_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	bool creating = before_open(path, mode);
	FILE *fp = SFS_FD_RETRY(FILE *, NULL, SFS_REAL(fopen64)(path, mode));
	return opened(fp, mode, path, creating);
}

SFS_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	bool creating = path && before_open(path, mode);
	return opened(SFS_REAL(freopen)(path, mode, stream), mode, path, creating);
}

SFS_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	bool creating = path && before_open(path, mode);
	return opened(SFS_REAL(freopen64)(path, mode, stream), mode, path, creating);
}

SFS_EXPORT FILE *fdopen(int fd, const char *mode)
{
	SFS_HIDE_INTERNAL(fd, NULL);
	if (sfs_active())
		sfs_demote_fd(fd); /* the stream uses fd's open file and offset */
	return handed_to_stdio(SFS_REAL(fdopen)(fd, mode), mode);
}

/* stdio wrote through fd (fflush): a managed file at 0-2 settles
 * (fs/kpos.h). */
static void settle(int fd)
{
	if (fd < 0 || fd > 2 || sfs_fd_kind(fd) != SFS_FD_KIND_MANAGED)
		return;
	struct sfs_file *f = sfs_fd_get(fd);
	if (f) {
		sfs_file_kpos_settle(f, fd);
		sfs_file_put(f);
	}
}

/* A stream on a descriptor whose stdio writes are synced (stdio_out.h):
 * its buffered data durable once stdio has written it out. fp NULL: every
 * stream. */
static int synced(FILE *fp, int r)
{
	if (r == 0 && fp && sfs_stdio_syncs(fileno(fp)) && SFS_REAL(fdatasync)(fileno(fp)) != 0)
		return EOF;
	if (r == 0 && sfs_live()) {
		settle(fp ? fileno(fp) : STDOUT_FILENO);
		if (!fp)
			settle(STDERR_FILENO);
	}
	return r;
}

SFS_EXPORT int fflush(FILE *fp)
{
	return synced(fp, SFS_REAL(fflush)(fp));
}

#undef fflush_unlocked
SFS_EXPORT int fflush_unlocked(FILE *fp)
{
	return synced(fp, SFS_REAL(fflush_unlocked)(fp));
}

/* glibc closes the descriptor internally: the library's entry for that
 * number goes here (after the data is durable, for a marked one). */
SFS_EXPORT int fclose(FILE *fp)
{
	sfs_init();
	int fd = fp ? fileno(fp) : -1;
	int r = 0;
	if (fd >= 0 && sfs_stdio_syncs(fd))
		r = synced(fp, SFS_REAL(fflush)(fp));
	struct sfs_file *f = fd >= 0 && sfs_live() ? sfs_fd_remove(fd) : NULL;
	int c = SFS_REAL(fclose)(fp);
	if (f)
		sfs_file_put(f);
	return c != 0 ? c : r;
}
