/* SPDX-License-Identifier: Apache-2.0 */
/* Listing a directory for the library's own needs (/proc, its private
 * folder): getdents64 into a buffer of the caller's, not libc's DIR
 * streams. The program's readdir may be wrapped by a later preload, a
 * fault injector that fails the first call it sees, say (coreutils'
 * rm-readdir-fail test): a stream of the library's would reach that
 * wrapper too (sfs_real is the next object's function) and take the
 * fault meant for the program. Nothing is allocated. */
#ifndef SFS_UTIL_DIRSCAN_H
#define SFS_UTIL_DIRSCAN_H

#include <dirent.h>
#include <stdalign.h>
#include <stddef.h>
#include <sys/types.h>

/* getdents64(2): the system call inside the library
 * (sfs_kernel_getdents64), libc's function in the CLI and unit tests. */
typedef ssize_t (*sfs_getdents_fn)(int fd, void *buf, size_t len);

struct sfs_dirscan {
	sfs_getdents_fn getdents;
	int fd;
	int at;	 /* the next entry's offset in buf */
	int len; /* bytes of entries in buf */
	alignas(struct dirent64) char buf[2048];
};

/* Lists the directory open at fd, which stays the caller's to close. */
void sfs_dirscan_start(struct sfs_dirscan *s, int fd, sfs_getdents_fn getdents);

/* The next entry ("." and ".." too), or NULL at the end or on an error. */
const struct dirent64 *sfs_dirscan_next(struct sfs_dirscan *s);

#endif
