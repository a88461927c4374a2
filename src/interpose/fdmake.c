/* SPDX-License-Identifier: Apache-2.0 */
/* Calls that make descriptors and touch no managed file: when the
 * application meets RLIMIT_NOFILE because of the library's own
 * descriptors, the library gives them back and the call is made again
 * (fs/process.h: sfs_fds_relieve). The open family, dup and fopen do the
 * same in their own wrappers. */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <unistd.h>

#include "../fs/process.h"
#include "wrap.h"

SFS_EXPORT int pipe(int fds[2])
{
	sfs_init();
	return SFS_FD_RETRY(int, -1, SFS_REAL(pipe)(fds));
}

SFS_EXPORT int pipe2(int fds[2], int flags)
{
	sfs_init();
	return SFS_FD_RETRY(int, -1, SFS_REAL(pipe2)(fds, flags));
}

SFS_EXPORT int socket(int domain, int type, int protocol)
{
	sfs_init();
	return SFS_FD_RETRY(int, -1, SFS_REAL(socket)(domain, type, protocol));
}

SFS_EXPORT int socketpair(int domain, int type, int protocol, int fds[2])
{
	sfs_init();
	return SFS_FD_RETRY(int, -1, SFS_REAL(socketpair)(domain, type, protocol, fds));
}

SFS_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	sfs_init();
	return SFS_FD_RETRY(int, -1, SFS_REAL(accept)(fd, addr, len));
}

SFS_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	sfs_init();
	return SFS_FD_RETRY(int, -1, SFS_REAL(accept4)(fd, addr, len, flags));
}
