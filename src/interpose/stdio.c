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

/* Before fopen: the open may truncate ("w"), so staged data of that file
 * must reach the kernel first, or a later relink would resurrect it. */
static void before_open(const char *path)
{
	struct stat st;
	if (!sfs_active() || sfs_inode_staged_count() == 0 || sfs_real.stat(path, &st) != 0)
		return;
	struct sfs_inode *in = sfs_inode_find(st.st_dev, st.st_ino);
	if (in) {
		sfs_inode_flush(in, SFS_FLUSH_VISIBLE);
		sfs_inode_put(in);
	}
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
		sfs_stat_call_end(SFS_CALL_stdio, t0, 0, true);
	}
	errno = saved;
	return fp;
}

SFS_EXPORT FILE *fopen(const char *path, const char *mode)
{
	before_open(path);
	return handed_to_stdio(sfs_real.fopen(path, mode), mode);
}

SFS_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	before_open(path);
	return handed_to_stdio(sfs_real.fopen64(path, mode), mode);
}

SFS_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	if (path)
		before_open(path);
	return handed_to_stdio(sfs_real.freopen(path, mode, stream), mode);
}

SFS_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	if (path)
		before_open(path);
	return handed_to_stdio(sfs_real.freopen64(path, mode, stream), mode);
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
