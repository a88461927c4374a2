/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "process.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../init.h"
#include "../interpose/real.h"
#include "../staging/pool.h"
#include "../util/pmem.h"
#include "../util/stats.h"
#include "fdtable.h"
#include "file.h"
#include "flush.h"
#include "../oplog/oplog.h"

/* Writes f's offset back to the kernel's open file description at fd. */
static void push_offset(int fd, struct sfs_file *f)
{
	pthread_mutex_lock(&f->pos_lock);
	sfs_real.lseek(fd, f->pos, SEEK_SET);
	pthread_mutex_unlock(&f->pos_lock);
}

/* Drops fd from the table after pushing its offset. */
static void drop_fd(int fd, struct sfs_file *f)
{
	push_offset(fd, f);
	struct sfs_file *removed = sfs_fd_remove(fd);
	if (removed)
		sfs_file_put(removed);
}

void sfs_demote_inode(struct sfs_inode *in)
{
	sfs_inode_flush(in, SFS_FLUSH_VISIBLE);
	if (in->logged) { /* sync/strict: durable, out of the log */
		sfs_inode_lock(in);
		sfs_oplog_commit(in);
		sfs_inode_unlock(in);
	}
	sfs_demoted_add(in->dev, in->ino);
	int limit = sfs_fd_limit();
	for (int fd = 0; fd < limit; fd++) {
		struct sfs_file *f = sfs_fd_get(fd);
		if (!f)
			continue;
		if (f->inode == in) {
			drop_fd(fd, f);
			if (sfs_oplog_on()) /* writes stay durable per call */
				sfs_fd_set_dsync(fd, true);
		}
		sfs_file_put(f);
	}
	sfs_stat_event(SFS_EV_demotions, 1);
}

void sfs_demote_fds(bool inheritable_only)
{
	int limit = sfs_fd_limit();
	for (int fd = 0; fd < limit; fd++) {
		struct sfs_file *f = sfs_fd_get(fd);
		if (!f)
			continue;
		if (!inheritable_only || !(sfs_real.fcntl(fd, F_GETFD) & FD_CLOEXEC)) {
			struct sfs_inode *in = f->inode;
			sfs_demoted_add(in->dev, in->ino);
			if (in->logged) { /* the kernel serves it: its records die */
				sfs_inode_lock(in);
				sfs_oplog_commit(in);
				sfs_inode_unlock(in);
			}
			drop_fd(fd, f);
			if (sfs_oplog_on()) /* writes stay durable per call */
				sfs_fd_set_dsync(fd, true);
			sfs_stat_event(SFS_EV_demotions, 1);
		}
		sfs_file_put(f);
	}
}

void sfs_prepare_share(void)
{
	if (!sfs_g.active)
		return;
	sfs_flush_all();
	sfs_inode_evict_writable(); /* the new program may be one we just wrote */
	int limit = sfs_fd_limit();
	for (int fd = 0; fd < limit; fd++) {
		struct sfs_file *f = sfs_fd_get(fd);
		if (f) {
			push_offset(fd, f);
			sfs_file_put(f);
		}
	}
}

void sfs_atfork_prepare(void)
{
	sfs_prepare_share();
}

void sfs_atfork_parent(void)
{
	/* The child shares every descriptor the parent had at fork. */
	if (sfs_g.active)
		sfs_demote_fds(false);
}

void sfs_atfork_child(void)
{
	sfs_self_pid_reset();
	if (!sfs_g.active)
		return;
	sfs_oplog_reset_child();
	/* Start empty: inherited descriptors belong to the kernel (the parent
	 * demoted its copies too; in sync and strict modes their writes are
	 * synced), the staging files to the parent. */
	sfs_fd_reset(sfs_oplog_on());
	sfs_file_reset_free_list();
	sfs_inode_table_reset();
	sfs_demoted_pin_all();
	sfs_staging_reset_child();
	sfs_pmem_learn_unclaim(); /* the parent's learner is not ours */
	sfs_stats_reset();
}

void sfs_demote_inherited(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int self = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		struct stat st;
		if (e->d_name[0] == '.' || fd == self || sfs_real.fstat(fd, &st) != 0)
			continue;
		if (!S_ISREG(st.st_mode) || st.st_dev != sfs_g.root_dev)
			continue;
		sfs_demoted_add(st.st_dev, st.st_ino);
		/* Sync/strict: what this program writes there is durable per
		 * call, as on its own files. */
		if (sfs_oplog_on() && (sfs_real.fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDONLY)
			sfs_fd_set_dsync(fd, true);
	}
	closedir(d);
}
