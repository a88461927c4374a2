/* SPDX-License-Identifier: Apache-2.0 */
/* stdio. glibc's FILE functions reach the kernel through internal calls no
 * interposer sees, so a managed file handed to stdio is relinked and left
 * to the kernel (demoted) for as long as this process runs. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
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

/* The FILE's descriptor now belongs to stdio: the kernel serves its file. */
static FILE *handed_to_stdio(FILE *fp)
{
	if (!fp || !sfs_g.active)
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
	return handed_to_stdio(sfs_real.fopen(path, mode));
}

SFS_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	before_open(path);
	return handed_to_stdio(sfs_real.fopen64(path, mode));
}

SFS_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	if (path)
		before_open(path);
	return handed_to_stdio(sfs_real.freopen(path, mode, stream));
}

SFS_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	if (path)
		before_open(path);
	return handed_to_stdio(sfs_real.freopen64(path, mode, stream));
}

SFS_EXPORT FILE *fdopen(int fd, const char *mode)
{
	SFS_HIDE_INTERNAL(fd, NULL);
	struct sfs_file *f = sfs_wrap_file(fd);
	if (f) {
		sfs_demote_inode(f->inode);
		sfs_file_put(f);
	}
	return handed_to_stdio(sfs_real.fdopen(fd, mode));
}
