/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "kpos.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "../oplog/oplog.h"
#include "../sys/real.h"
#include "../util/signals.h"
#include "fdtable.h"
#include "fileops.h"
#include "flush.h"
#include "inode.h"

/* f->pos and the record of the last push, to at. */
static void set_pos(struct sfs_file *f, int64_t at)
{
	sfs_mutex_lock(&f->pos_lock);
	f->pos = at;
	f->kpos_at = at;
	sfs_mutex_unlock(&f->pos_lock);
}

/* f->pos to fd's open file; for an O_APPEND open (whose open file the
 * library serves without O_APPEND) the end of the file, where an unseen
 * write must go. */
static void push(struct sfs_file *f, int fd)
{
	off_t at;
	if (sfs_file_flags(f) & O_APPEND) {
		at = SFS_REAL(lseek)(fd, 0, SEEK_END);
	} else {
		sfs_mutex_lock(&f->pos_lock);
		at = f->pos;
		sfs_mutex_unlock(&f->pos_lock);
		at = SFS_REAL(lseek)(fd, at, SEEK_SET);
	}
	if (at >= 0)
		set_pos(f, at);
}

static void kpos_start(struct sfs_file *f, int fd)
{
	if (fd < 0 || fd > 2 || sfs_file_kpos_on(f))
		return;
	int saved = errno;
	sfs_mutex_lock(&f->kpos_lock);
	/* Its unseen writes: only the kernel's fsync knows them (logsync.h). */
	atomic_store(&f->inode->unseen, true);
	if (!sfs_file_kpos_on(f)) {
		sfs_inode_flush(f->inode, SFS_FLUSH_VISIBLE);
		push(f, fd);
		atomic_store(&f->kpos, true);
	}
	sfs_mutex_unlock(&f->kpos_lock);
	errno = saved;
}

void sfs_file_install(int fd, struct sfs_file *f)
{
	if (sfs_fd_install(fd, f) == 0)
		kpos_start(f, fd);
}

bool sfs_file_kpos_pull_slow(struct sfs_file *f, int fd)
{
	int saved = errno;
	sfs_mutex_lock(&f->kpos_lock);
	off_t at = SFS_REAL(lseek)(fd, 0, SEEK_CUR);
	if (at >= 0) {
		sfs_mutex_lock(&f->pos_lock);
		bool moved = at != f->kpos_at;
		sfs_mutex_unlock(&f->pos_lock);
		/* Unseen calls since the last push: writes, unless the open
		 * file cannot write (then reads only, which change nothing). */
		if (moved && sfs_file_writable(f))
			sfs_inode_kernel_wrote(f->inode);
		set_pos(f, at);
	}
	errno = saved;
	return true;
}

void sfs_file_kpos_push(struct sfs_file *f, int fd)
{
	int saved = errno;
	if (sfs_file_writable(f))
		sfs_inode_flush(f->inode, SFS_FLUSH_VISIBLE);
	push(f, fd);
	sfs_mutex_unlock(&f->kpos_lock);
	errno = saved;
}

void sfs_file_kpos_settle(struct sfs_file *f, int fd)
{
	if (fd < 0 || fd > 2 || !sfs_file_kpos_on(f) || !sfs_file_writable(f) || !sfs_oplog_on())
		return;
	int saved = errno;
	sfs_inode_kernel_wrote(f->inode);
	errno = saved;
}
