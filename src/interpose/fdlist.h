/* SPDX-License-Identifier: Apache-2.0 */
/* The process's listing of its own descriptors (fdlist.c). */
#ifndef SFS_INTERPOSE_FDLIST_H
#define SFS_INTERPOSE_FDLIST_H

/* Called after each open by name: a descriptor of the process's own
 * descriptor directory (path names it) is marked for fdopendir and
 * getdents64. */
void sfs_fdlist_opened(int fd, const char *path);

/* Called after a dup of oldfd to newfd: a copy of a marked descriptor is
 * marked too (Python's os.listdir(fd) lists a dup of fd). */
void sfs_fdlist_dup(int oldfd, int newfd);

#endif
