/* SPDX-License-Identifier: Apache-2.0 */
/* Descriptors passed to another process over a unix socket (SCM_RIGHTS in
 * sendmsg, sendmmsg) share their open file with it, as a forked child's
 * do: the receiver's reads and writes are the kernel's. So before one
 * leaves, its file is left to the kernel here too (fs/process.h): staged
 * appends relinked, the application's own open file given back (its
 * O_APPEND, its offset), and no lease under which the library would go on
 * staging. A descriptor the application does not have open (one of the
 * library's own) is refused with EBADF, as the kernel refuses a closed one. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/socket.h>

#include "../fs/fdtable.h"
#include "../fs/process.h"
#include "../util/guard.h"
#include "wrap.h"

/* The most control data looked at: far more descriptors than SCM_MAX_FD
 * (253) fit. A larger buffer is left to the kernel to judge. */
#define CONTROL_MAX 4096

/* 0, or -EBADF when a passed descriptor is the library's. A message the
 * library cannot read (a bad pointer) is the kernel's to refuse. */
static int pass_fds(const struct msghdr *umsg)
{
	struct msghdr msg;
	if (!umsg || sfs_guarded_copy(&msg, umsg, sizeof(msg)) != 0)
		return 0;
	if (!msg.msg_control || msg.msg_controllen < sizeof(struct cmsghdr))
		return 0;
	_Alignas(struct cmsghdr) char ctl[CONTROL_MAX];
	if (msg.msg_controllen > sizeof(ctl) ||
	    sfs_guarded_copy(ctl, msg.msg_control, msg.msg_controllen) != 0)
		return 0;
	msg.msg_control = ctl;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (sfs_fd_is_internal(fd))
				return -EBADF;
			sfs_demote_fd(fd);
		}
	}
	return 0;
}

SFS_EXPORT ssize_t sendmsg(int sock, const struct msghdr *msg, int flags)
{
	SFS_HIDE_INTERNAL(sock, -1);
	sfs_init();
	int rc = sfs_active() ? pass_fds(msg) : 0;
	if (rc) {
		errno = -rc;
		return -1;
	}
	return SFS_REAL(sendmsg)(sock, msg, flags);
}

SFS_EXPORT int sendmmsg(int sock, struct mmsghdr *vec, unsigned int n, int flags)
{
	SFS_HIDE_INTERNAL(sock, -1);
	sfs_init();
	/* pass_fds reads each header under the fault guard itself. */
	for (unsigned int i = 0; vec && sfs_active() && i < n && i < 1024; i++) {
		int rc = pass_fds(&vec[i].msg_hdr);
		if (rc) {
			errno = -rc;
			return -1;
		}
	}
	return SFS_REAL(sendmmsg)(sock, vec, n, flags);
}
