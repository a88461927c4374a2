/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "process.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/self.h"
#include "../sys/real.h"
#include "../sys/statq.h"
#include "../staging/pool.h"
#include "../staging/reserve.h"
#include "../util/compiler.h"
#include "../util/decname.h"
#include "../util/dirscan.h"
#include "../util/pmem.h"
#include "../util/stats.h"
#include "../util/threads.h"
#include "fdtable.h"
#include "file.h"
#include "flush.h"
#include "forkwatch.h"
#include "lease.h"
#include "logged.h"
#include "share.h"
#include "../oplog/oplog.h"
#include "../util/signals.h"
#include "kernel_files.h"
#include "kpos.h"

/* The status flags fcntl(F_SETFL) sets on an open file. */
#define SETFL_BITS (O_APPEND | O_NONBLOCK | O_NOATIME | O_ASYNC | O_DIRECT)

/* Makes fd refer to nfd's open file, keeping fd's close-on-exec flag. */
static void point_at(int nfd, int fd)
{
	int fdflags = SFS_REAL(fcntl)(fd, F_GETFD);
	if (fdflags >= 0)
		SFS_REAL(dup3)(nfd, fd, (fdflags & FD_CLOEXEC) ? O_CLOEXEC : 0);
}

/* The open file f's descriptors fds[0..n) get from the kernel from now on:
 * the one the application's open made, as it made it. A file that shares
 * the inode's adapted open file (f->kshared) takes it back with its status
 * flags when it is the first to and its access mode matches (*primary);
 * any other gets an open file of its own, opened again as the application
 * opened it. */
static void give_back(struct sfs_file *f, const int *fds, int n, bool *primary)
{
	struct sfs_inode *in = f->inode;
	int flags = sfs_file_flags(f);
	sfs_mutex_lock(&f->pos_lock);
	int64_t pos = f->pos;
	sfs_mutex_unlock(&f->pos_lock);
	if (sfs_file_kpos_on(f)) { /* the kernel's offset is the file's */
		off_t at = SFS_REAL(lseek)(fds[0], 0, SEEK_CUR);
		if (at >= 0)
			pos = at;
	}
	if (!f->kshared) { /* its own open file, untouched: only the offset */
		SFS_REAL(lseek)(fds[0], pos, SEEK_SET);
		return;
	}
	int kacc = in->readable ? (in->kwritable ? O_RDWR : O_RDONLY) : O_WRONLY;
	/* Pointing a descriptor elsewhere closes one of the file's, which
	 * would drop the process's POSIX locks on it: those stay shared. */
	bool locks = atomic_load(&in->posix_locks) || sfs_posix_locked(in->dev, in->ino);
	/* O_DSYNC or O_SYNC cannot be put back on an open file: such an
	 * open gets one of its own (sfs_openfile_prepare took them off). */
	if ((!*primary && (flags & O_ACCMODE) == kacc && !(flags & O_DSYNC)) || locks) {
		*primary = true;
		int cur = SFS_REAL(fcntl)(fds[0], F_GETFL);
		if (cur >= 0)
			(void)SFS_REAL(fcntl)(fds[0], F_SETFL,
					      (cur & ~SETFL_BITS) | (flags & SETFL_BITS));
		SFS_REAL(lseek)(fds[0], pos, SEEK_SET);
		return;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", in->kfd);
	int keep = O_ACCMODE | O_APPEND | O_NONBLOCK | O_NOATIME | O_DSYNC | O_SYNC | O_DIRECT;
	int nfd = SFS_REAL(open)(path, (flags & keep) | O_CLOEXEC | O_NOCTTY);
	if (nfd < 0) {
		/* Not permitted any more (a chmod since): the shared open file,
		 * with this open's status flags. */
		int cur = SFS_REAL(fcntl)(fds[0], F_GETFL);
		if (cur >= 0)
			(void)SFS_REAL(fcntl)(fds[0], F_SETFL,
					      (cur & ~SETFL_BITS) | (flags & SETFL_BITS));
		SFS_REAL(lseek)(fds[0], pos, SEEK_SET);
		return;
	}
	SFS_REAL(lseek)(nfd, pos, SEEK_SET);
	for (int i = 0; i < n; i++)
		point_at(nfd, fds[i]);
	SFS_REAL(close)(nfd);
}

/* Gives every descriptor of in back to the kernel and drops it from the
 * fd table; the inode object is forgotten once unused. */
static void demote_locked_out(struct sfs_inode *in)
{
	int limit = sfs_fd_limit();
	int *fds = malloc((size_t)(limit > 0 ? limit : 1) * sizeof(*fds));
	struct sfs_file **files = malloc((size_t)(limit > 0 ? limit : 1) * sizeof(*files));
	int n = 0;
	for (int fd = 0; fds && files && fd < limit; fd++) {
		struct sfs_file *f = sfs_fd_get(fd);
		if (!f)
			continue;
		if (f->inode == in) {
			fds[n] = fd;
			files[n++] = f; /* keeps the reference */
		} else {
			sfs_file_put(f);
		}
	}
	bool primary = false;
	for (int i = 0; i < n; i++) {
		if (!files[i])
			continue;
		/* The descriptors of one open file (dups) together. */
		struct sfs_file *f = files[i];
		int group[64], g = 0;
		for (int j = i; j < n && g < 64; j++)
			if (files[j] == f)
				group[g++] = fds[j];
		give_back(f, group, g, &primary);
		for (int j = 0; j < g; j++)
			sfs_forkwatch_demoted(group[j], in->dev, in->ino);
		for (int j = i; j < n; j++) {
			if (files[j] != f)
				continue;
			struct sfs_file *removed = sfs_fd_remove(fds[j]);
			if (removed)
				sfs_file_put(removed);
			if (sfs_oplog_on()) /* writes stay durable per call */
				sfs_fd_set_dsync(fds[j], true);
			if (j != i)
				sfs_file_put(f);
			files[j] = NULL;
		}
		sfs_file_put(f);
	}
	free(fds);
	free(files);
}

void sfs_demote_inode(struct sfs_inode *in)
{
	sfs_inode_lock(in);
	sfs_lease_drop_locked(in); /* relinks, retires the log records */
	if (in->log.logged)
		sfs_inode_log_commit(in);
	in->mergeable = false;
	sfs_inode_unlock(in);
	sfs_inode_unhash(in); /* a later open makes a new one */
	demote_locked_out(in);
	sfs_stat_event(SFS_EV_demotions, 1);
}

void sfs_demote_fd(int fd)
{
	sfs_forkwatch_forget(fd);
	sfs_fd_pending_forget(fd);
	struct sfs_file *f = sfs_live() ? sfs_fd_get(fd) : NULL;
	if (f) {
		sfs_demote_inode(f->inode);
		sfs_file_put(f);
	}
}

/* The inodes with a descriptor the other process inherits. */
static void demote_if_inherited(struct sfs_inode *in, void *all)
{
	int fds[256];
	int n = sfs_inode_app_fds(in, fds, 256);
	bool inherited = *(bool *)all || n > 256;
	for (int i = 0; i < SFS_MIN(n, 256) && !inherited; i++)
		inherited = !(SFS_REAL(fcntl)(fds[i], F_GETFD) & FD_CLOEXEC);
	if (inherited && n > 0)
		sfs_demote_inode(in);
}

void sfs_demote_fds(bool inheritable_only)
{
	bool all = !inheritable_only;
	sfs_inode_foreach(demote_if_inherited, &all);
}

bool sfs_fds_relieve(void)
{
	atomic_store(&sfs_g.fd_pressure, true);
	sfs_inode_evict_cached();
	sfs_staging_release_pool();
	sfs_demote_fds(false); /* the open files' descriptors of the library's go with them */
	return true;
}

void sfs_prepare_share(bool inheritable_only)
{
	if (!sfs_live())
		return;
	/* Their open files are shared now (a spawn's child closes those
	 * with FD_CLOEXEC at its exec, before anything can use them). */
	if (inheritable_only)
		sfs_fd_pending_forget_inheritable();
	else
		sfs_fd_pending_forget_all();
	sfs_flush_all();
	sfs_lease_drop_all();
	sfs_inode_evict_writable(); /* the new program may be one we just wrote */
	sfs_demote_fds(inheritable_only);
}

void sfs_atfork_prepare(void)
{
	/* The child shares every descriptor the parent has: they are demoted,
	 * and watched until the child lets go of them (forkwatch.h). Pending
	 * ones stay the kernel's; first, before any lock that a promotion in
	 * progress may need. */
	if (sfs_live())
		sfs_fd_pending_forget_all();
	sfs_forkwatch_prepare();
	sfs_prepare_share(false);
	sfs_threads_fork_prepare(); /* after the flushes, which may start one */
	sfs_pmem_atfork_prepare();  /* last: no libpmem2 load or map in flight */
}

void sfs_vfork_prepare(void)
{
	sfs_forkwatch_wrapper(true);
	sfs_fd_pending_forget_all();
	sfs_forkwatch_prepare();
	sfs_prepare_share(false);
}

void sfs_vfork_parent(pid_t pid)
{
	sfs_forkwatch_parent();
	sfs_forkwatch_wrapper(false);
	sfs_forkwatch_born(pid);
}

void sfs_atfork_parent(void)
{
	sfs_pmem_atfork_parent();
	sfs_threads_fork_done();
	sfs_forkwatch_parent();
}

void sfs_atfork_child(void)
{
	sfs_pmem_atfork_child();
	sfs_forkwatch_reset_child();
	sfs_self_pid_reset();
	if (!sfs_live())
		return;
	sfs_oplog_reset_child();
	/* Start empty: inherited descriptors belong to the kernel (the parent
	 * demoted them; in sync and strict modes their writes are synced), the
	 * staging stores to the parent. */
	sfs_fd_reset(sfs_oplog_on());
	sfs_file_reset_free_list();
	sfs_inode_table_reset();
	sfs_staging_reset_child();
	sfs_reserve_reset_child();
	sfs_lease_reset_child();
	sfs_threads_reset_child();
	sfs_signals_reset_child();
	sfs_share_reset_child();  /* the parent's slot and sessions are not ours */
	sfs_pmem_learn_unclaim(); /* the parent's learner is not ours */
	sfs_stats_reset();
}

/* Each descriptor the process holds that is on device dev (not the
 * scan's own): with mark, a writable regular file's writes made durable
 * per call (sync/strict); without, the scan stops at the first. Returns
 * whether it found one; true when /proc cannot tell. */
static bool scan_held(dev_t dev, bool mark)
{
	/* /proc/<tid>/fd: the directory /proc/thread-self/fd names, without
	 * the link the kernel follows for that name (a sync-mode start's open
	 * of it: 8-9 us against 15-16 in a new process). */
	char path[48];
	uint64_t tid = (uint64_t)SFS_REAL(syscall)(SYS_gettid);
	size_t n = sfs_decname(path, sizeof(path), "/proc/", &tid, 1);
	sfs_name_cat(path + n, sizeof(path) - n, "/fd", "");
	int self = SFS_REAL(open)(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (self < 0)
		return true;
	bool found = false;
	struct sfs_dirscan scan;
	sfs_dirscan_start(&scan, self, sfs_kernel_getdents64);
	const struct dirent64 *e;
	while ((e = sfs_dirscan_next(&scan)) != NULL) {
		int fd = atoi(e->d_name);
		struct stat st;
		if (e->d_name[0] == '.' || fd == self || sfs_fstat_quiet(fd, &st) != 0 ||
		    st.st_dev != dev)
			continue;
		found = true;
		if (!mark)
			break;
		/* Sync/strict: what this program writes there is durable per
		 * call, as on its own files. */
		if (S_ISREG(st.st_mode) && (SFS_REAL(fcntl)(fd, F_GETFL) & O_ACCMODE) != O_RDONLY)
			sfs_fd_set_dsync(fd, true);
	}
	SFS_REAL(close)(self);
	return found;
}

void sfs_demote_inherited(void)
{
	if (sfs_oplog_on())
		scan_held(sfs_g.root_dev, true);
}

bool sfs_holds_root_descriptor(const char *root)
{
	struct stat st;
	if (sfs_stat_quiet(AT_FDCWD, root, 0, &st) != 0)
		return true; /* setup_root will say why */
	return scan_held(st.st_dev, false);
}
