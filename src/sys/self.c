/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "self.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "global.h"
#include "real.h"
#include "../util/compiler.h"

SFS_HOT static int self_pid;
/* Set once at start-up, before any thread of the library runs. */
SFS_HOT static void (*marker)(int fd, bool internal);

int sfs_self_pid(void)
{
	int p = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);
	if (!p) {
		p = getpid();
		__atomic_store_n(&self_pid, p, __ATOMIC_RELAXED);
	}
	return p;
}

void sfs_self_pid_reset(void)
{
	__atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
}

void sfs_internal_set_marker(void (*mark)(int fd, bool internal))
{
	marker = mark;
}

int sfs_internal_dup(int fd)
{
	int hi = SFS_REAL(fcntl)(fd, F_DUPFD_CLOEXEC, sfs_g.fd_floor);
	if (hi >= 0 || errno != EINVAL)
		return hi;
	/* The floor is at or past the limit: the program lowered it since
	 * the start (bash's `ulimit -n 128`). The highest number free below
	 * the new limit, which a program's open (lowest free first) reaches
	 * last and few dup2 onto. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur > (rlim_t)sfs_g.fd_floor)
		return -1; /* EINVAL for another reason */
	int top = (int)rl.rlim_cur;
	for (int at = top - 1; at >= top / 2; at--) {
		hi = SFS_REAL(fcntl)(fd, F_DUPFD_CLOEXEC, at);
		if (hi >= 0)
			return hi;
	}
	errno = EMFILE;
	return -1;
}

int sfs_internal_fd(int fd)
{
	int hi = sfs_internal_dup(fd);
	if (hi >= 0) {
		SFS_REAL(close)(fd);
		fd = hi;
	}
	if (marker)
		marker(fd, true);
	return fd;
}

static int privdir_open(void)
{
	int fd = SFS_REAL(open)(sfs_g.priv_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (SFS_REAL(fstat)(fd, &st) != 0 || st.st_dev != sfs_g.root_dev ||
	    st.st_ino != sfs_g.priv_ino) {
		SFS_REAL(close)(fd);
		errno = ESTALE; /* replaced since the start: not the one checked */
		return -1;
	}
	fd = sfs_internal_fd(fd);
	/* Two threads may open it at once: the first one kept serves both. */
	int none = -1;
	if (!__atomic_compare_exchange_n(&sfs_g.priv_dirfd, &none, fd, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		sfs_internal_close(fd);
		fd = none;
	}
	return fd;
}

int sfs_privdir(void)
{
	int fd = __atomic_load_n(&sfs_g.priv_dirfd, __ATOMIC_ACQUIRE);
	return sfs_likely(fd >= 0) ? fd : privdir_open();
}

void sfs_internal_close(int fd)
{
	if (fd < 0)
		return;
	if (marker)
		marker(fd, false);
	SFS_REAL(close)(fd);
}
