/* SPDX-License-Identifier: Apache-2.0 */
/* stdio. glibc's FILE functions reach the kernel through internal calls no
 * interposer sees. A file opened by stdio for writing, or a managed
 * descriptor handed to fdopen, is relinked and left to the kernel (demoted)
 * for as long as this process runs; a file fopen'ed read-only is relinked
 * first and stays managed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../fs/flush.h"
#include "../fs/inode.h"
#include "../fs/process.h"
#include "wrap.h"

/* The open(2) flags of a stdio mode: what matters here is O_CREAT. */
static int mode_flags(const char *mode)
{
	if (!mode || mode[0] == 'r')
		return mode && strchr(mode, '+') ? O_RDWR : O_RDONLY;
	return O_CREAT | (strchr(mode, 'x') ? O_EXCL : 0) | O_WRONLY;
}

/* Before fopen: the open may truncate ("w"), so staged data of that file
 * must reach the kernel first, or a later relink would resurrect it.
 * Returns whether the open will create the file, when that must be made
 * durable (sync and strict modes). */
static bool before_open(const char *path, const char *mode)
{
	struct stat st;
	sfs_init();
	bool creating = sfs_metasync_on() && sfs_metasync_will_create(AT_FDCWD, path,
								       mode_flags(mode));
	if (!sfs_active() || sfs_inode_staged_count() == 0 || sfs_real.stat(path, &st) != 0)
		return creating;
	struct sfs_inode *in = sfs_inode_find(st.st_dev, st.st_ino);
	if (in) {
		sfs_inode_flush(in, SFS_FLUSH_VISIBLE);
		sfs_inode_put(in);
	}
	return creating;
}

/* A read-only stream ("r", "rb", no "+") reads what the kernel file holds,
 * as another process would (before_open relinked it); it cannot write
 * around the library's staging, so the file stays managed. */
static bool read_only(const char *mode)
{
	return mode && mode[0] == 'r' && !strchr(mode, '+');
}

/* The FILE's descriptor now belongs to stdio: the kernel serves its file. */
static FILE *handed_to_stdio(FILE *fp, const char *mode)
{
	if (!fp || !sfs_g.active || read_only(mode))
		return fp;
	uint64_t t0 = sfs_stat_start();
	int saved = errno;
	struct stat st;
	int fd = fileno(fp);
	if (fd >= 0 && sfs_real.fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_dev == sfs_g.root_dev) {
		struct sfs_inode *in = sfs_inode_find(st.st_dev, st.st_ino);
		if (in) {
			sfs_demote_inode(in);
			sfs_inode_put(in);
		}
		sfs_demoted_add(st.st_dev, st.st_ino);
		/* In sync and strict modes fflush and fclose make its data
		 * durable (stdio's writes reach the kernel unseen). */
		if (sfs_metasync_on())
			sfs_fd_set_dsync(fd, true);
		sfs_stat_call_end(SFS_CALL_stdio, t0, 0, true);
	}
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
	return opened(sfs_real.fopen(path, mode), mode, path, creating);
}

SFS_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	bool creating = before_open(path, mode);
	return opened(sfs_real.fopen64(path, mode), mode, path, creating);
}

SFS_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	bool creating = path && before_open(path, mode);
	return opened(sfs_real.freopen(path, mode, stream), mode, path, creating);
}

SFS_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	bool creating = path && before_open(path, mode);
	return opened(sfs_real.freopen64(path, mode, stream), mode, path, creating);
}

SFS_EXPORT FILE *fdopen(int fd, const char *mode)
{
	SFS_HIDE_INTERNAL(fd, NULL);
	struct sfs_file *f = sfs_wrap_file(fd);
	if (f) {
		sfs_demote_inode(f->inode);
		sfs_file_put(f);
	}
	/* The stream shares fd's kernel offset: even a read-only one. */
	return handed_to_stdio(sfs_real.fdopen(fd, mode), "w");
}

/* A stream on a descriptor marked SFS_FD_DSYNC: its buffered data durable
 * once stdio has written it out. */
static int synced(FILE *fp, int r)
{
	if (r == 0 && fp && sfs_fd_is_dsync(fileno(fp)) && sfs_real.fdatasync(fileno(fp)) != 0)
		return EOF;
	return r;
}

SFS_EXPORT int fflush(FILE *fp)
{
	return synced(fp, sfs_real.fflush(fp));
}

/* glibc closes the descriptor internally: the library's entry for that
 * number goes here (after the data is durable, for a marked one). */
SFS_EXPORT int fclose(FILE *fp)
{
	sfs_init();
	int fd = fp ? fileno(fp) : -1;
	int r = 0;
	if (fd >= 0 && sfs_fd_is_dsync(fd))
		r = synced(fp, sfs_real.fflush(fp));
	struct sfs_file *f = fd >= 0 && sfs_g.active ? sfs_fd_remove(fd) : NULL;
	int c = sfs_real.fclose(fp);
	if (f)
		sfs_file_put(f);
	return c != 0 ? c : r;
}
