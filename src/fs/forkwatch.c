/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "forkwatch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../sys/self.h"
#include "../sys/real.h"
#include "../sys/statq.h"
#include "../util/clock.h"
#include "../util/dirscan.h"
#include "../util/signals.h"
#include "../util/stats.h"
#include "fdtable.h"
#include "kpos.h"
#include "fileops.h"

#define MAX_WATCHED 256
#define MAX_CHILDREN 64
/* Descriptors below this number have a bit in `bits`: the wrappers' miss
 * path tests it without the lock. A watched descriptor above it is never
 * taken back (it is not recorded). */
#define BITS_FDS 4096

struct watched {
	int fd;
	dev_t dev;
	ino_t ino;
};

SFS_HOT atomic_bool sfs_forkwatch_active;
static _Atomic uint64_t bits[BITS_FDS / 64];
SFS_HOT static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct watched watched[MAX_WATCHED];
SFS_HOT static int nwatched;
static int pidfds[MAX_CHILDREN];
SFS_HOT static int nchildren;
/* Forks between their prepare handler and the wrapper's sfs_forkwatch_born
 * (or the parent handler of a fork the wrapper did not make): their child
 * shares the watched descriptors but has no pidfd yet. */
SFS_HOT static int pending;
static _Atomic int64_t next_check_ns;
/* The thread is inside the fork wrapper / inside a fork's prepare. */
static _Thread_local bool in_wrapper, recording;

static bool bit_test(int fd)
{
	return fd >= 0 && fd < BITS_FDS &&
	       (atomic_load_explicit(&bits[fd / 64], memory_order_relaxed) >> (fd % 64) & 1);
}

static void bit_set(int fd, bool on)
{
	uint64_t m = (uint64_t)1 << (fd % 64);
	if (on)
		atomic_fetch_or(&bits[fd / 64], m);
	else
		atomic_fetch_and(&bits[fd / 64], ~m);
}

/* Caller holds lock: nothing is watched any more; the descriptors stay
 * with the kernel. */
static void clear_locked(void)
{
	for (int i = 0; i < nwatched; i++)
		bit_set(watched[i].fd, false);
	nwatched = 0;
	for (int i = 0; i < nchildren; i++)
		sfs_internal_close(pidfds[i]);
	nchildren = 0;
	atomic_store(&sfs_forkwatch_active, false);
}

void sfs_forkwatch_prepare(void)
{
	sfs_mutex_lock(&lock);
	pending++;
	sfs_mutex_unlock(&lock);
	recording = true;
}

void sfs_forkwatch_parent(void)
{
	recording = false;
	if (in_wrapper)
		return; /* sfs_forkwatch_born follows */
	/* A fork made by glibc itself (daemon) or through a raw symbol: the
	 * child is unknown, and shares everything watched. */
	sfs_mutex_lock(&lock);
	pending--;
	clear_locked();
	sfs_mutex_unlock(&lock);
}

void sfs_forkwatch_demoted(int fd, dev_t dev, ino_t ino)
{
	if (!recording || fd < 0 || fd >= BITS_FDS)
		return;
	sfs_mutex_lock(&lock);
	if (nwatched < MAX_WATCHED && !bit_test(fd)) {
		watched[nwatched++] = (struct watched){fd, dev, ino};
		bit_set(fd, true);
	}
	sfs_mutex_unlock(&lock);
}

/* The fork wrapper's marks, around the real fork. */
void sfs_forkwatch_wrapper(bool inside)
{
	in_wrapper = inside;
}

void sfs_forkwatch_born(pid_t pid)
{
	sfs_mutex_lock(&lock);
	pending--;
	if (pid > 0 && nwatched > 0) {
		int pfd = (int)SFS_REAL(syscall)(SYS_pidfd_open, pid, 0);
		if (pfd < 0 || nchildren == MAX_CHILDREN) {
			if (pfd >= 0)
				SFS_REAL(close)(pfd);
			clear_locked(); /* a child we cannot follow */
		} else {
			pidfds[nchildren++] = sfs_internal_fd(pfd);
			atomic_store(&sfs_forkwatch_active, true);
		}
	}
	sfs_mutex_unlock(&lock);
}

void sfs_forkwatch_forget(int fd)
{
	if (!bit_test(fd))
		return;
	sfs_mutex_lock(&lock);
	for (int i = 0; i < nwatched; i++) {
		if (watched[i].fd == fd) {
			watched[i] = watched[--nwatched];
			bit_set(fd, false);
			break;
		}
	}
	if (nwatched == 0)
		clear_locked();
	sfs_mutex_unlock(&lock);
}

static bool same_open_file(pid_t pid, int fd, int theirs)
{
	return SFS_REAL(syscall)(SYS_kcmp, sfs_self_pid(), pid, KCMP_FILE, fd, theirs) == 0;
}

/* Marks held[i] for every watched descriptor whose open file another
 * process holds (a grandchild, a process it was sent to). Processes this
 * one may not look into are not seen (they cannot have got the open file
 * from this user's processes without one of them sending it). */
static void find_other_holders(bool *held)
{
	int procfd = SFS_REAL(open)("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0) {
		for (int i = 0; i < nwatched; i++)
			held[i] = true;
		return;
	}
	pid_t self = sfs_self_pid();
	struct sfs_dirscan pids;
	sfs_dirscan_start(&pids, procfd, sfs_kernel_getdents64);
	const struct dirent64 *e;
	while ((e = sfs_dirscan_next(&pids)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
		int dfd = SFS_REAL(open)(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;
		struct sfs_dirscan fds;
		sfs_dirscan_start(&fds, dfd, sfs_kernel_getdents64);
		const struct dirent64 *f;
		while ((f = sfs_dirscan_next(&fds)) != NULL) {
			struct stat st;
			if (f->d_name[0] == '.' || sfs_stat_quiet(dfd, f->d_name, 0, &st) != 0 ||
			    !S_ISREG(st.st_mode))
				continue;
			int theirs = atoi(f->d_name);
			for (int i = 0; i < nwatched; i++)
				if (!held[i] && st.st_dev == watched[i].dev &&
				    st.st_ino == watched[i].ino &&
				    same_open_file((pid_t)pid, watched[i].fd, theirs))
					held[i] = true;
		}
		SFS_REAL(close)(dfd);
	}
	SFS_REAL(close)(procfd);
}

/* Caller holds lock, every watched child has exited: manages again each
 * watched descriptor that is still the file it was and that no other
 * process holds, the dups of one open file as one. */
static void take_back_all_locked(void)
{
	bool held[MAX_WATCHED] = {0};
	find_other_holders(held);
	bool done[MAX_WATCHED] = {0};
	for (int i = 0; i < nwatched; i++) {
		if (held[i] || done[i])
			continue;
		int fd = watched[i].fd;
		struct stat st;
		struct sfs_file *f = sfs_fd_get(fd);
		if (f || sfs_fd_is_internal(fd) || sfs_fstat_quiet(fd, &st) != 0 ||
		    st.st_dev != watched[i].dev || st.st_ino != watched[i].ino) {
			if (f)
				sfs_file_put(f); /* managed again already (reopened) */
			continue;
		}
		int flags = SFS_REAL(fcntl)(fd, F_GETFL);
		off_t pos = SFS_REAL(lseek)(fd, 0, SEEK_CUR);
		if (flags < 0 || pos < 0)
			continue;
		int group[MAX_WATCHED], n = 0;
		for (int j = i + 1; j < nwatched; j++) {
			if (!done[j] && watched[j].dev == watched[i].dev &&
			    watched[j].ino == watched[i].ino &&
			    same_open_file(sfs_self_pid(), fd, watched[j].fd)) {
				done[j] = true;
				if (!held[j])
					group[n++] = watched[j].fd;
			}
		}
		/* A write-only open file is replaced by a read-write one when it
		 * is managed: only a lone descriptor can be. */
		if ((flags & O_ACCMODE) == O_WRONLY && n > 0)
			continue;
		sfs_manage_at(fd, flags, pos);
		f = sfs_fd_get(fd);
		if (!f)
			continue;
		for (int k = 0; k < n; k++)
			sfs_file_install(group[k], f);
		sfs_file_put(f);
		sfs_stat_event(SFS_EV_fork_taken_back, 1 + (uint64_t)n);
	}
}

struct sfs_file *sfs_forkwatch_take_back(int fd)
{
	if (!bit_test(fd))
		return NULL;
	int64_t t = sfs_coarse_ns();
	/* Once per tick of the coarse clock while a child lives. */
	if (t < atomic_load_explicit(&next_check_ns, memory_order_relaxed))
		return NULL;
	sfs_mutex_lock(&lock);
	if (t < atomic_load(&next_check_ns) || pending > 0 || nwatched == 0) {
		sfs_mutex_unlock(&lock);
		return NULL;
	}
	atomic_store(&next_check_ns, t + 1);
	for (int i = 0; i < nchildren; i++) {
		struct pollfd p = {pidfds[i], POLLIN, 0};
		if (poll(&p, 1, 0) == 1) { /* exited */
			sfs_internal_close(pidfds[i]);
			pidfds[i--] = pidfds[--nchildren];
		}
	}
	if (nchildren > 0) {
		sfs_mutex_unlock(&lock);
		return NULL;
	}
	int saved = errno;
	take_back_all_locked();
	clear_locked();
	errno = saved;
	sfs_mutex_unlock(&lock);
	return sfs_fd_get(fd);
}

void sfs_forkwatch_reset_child(void)
{
	sfs_mutex_reset_child(&lock);
	for (int i = 0; i < nchildren; i++)
		SFS_REAL(close)(pidfds[i]); /* the parent's */
	SFS_SET(nchildren, 0);
	for (int i = 0; i < nwatched; i++)
		bit_set(watched[i].fd, false);
	SFS_SET(nwatched, 0);
	SFS_SET(pending, 0);
	SFS_SET(recording, false);
	SFS_SET(in_wrapper, false);
	SFS_SET(sfs_forkwatch_active, false);
}
