/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "self.h"

#include <fcntl.h>
#include <unistd.h>

#include "global.h"
#include "real.h"
#include "../util/compiler.h"

static int self_pid;
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

int sfs_internal_fd(int fd)
{
	int hi = sfs_real.fcntl(fd, F_DUPFD_CLOEXEC, sfs_g.fd_floor);
	if (hi >= 0) {
		sfs_real.close(fd);
		fd = hi;
	}
	if (marker)
		marker(fd, true);
	return fd;
}

void sfs_internal_close(int fd)
{
	if (fd < 0)
		return;
	if (marker)
		marker(fd, false);
	sfs_real.close(fd);
}
