/* SPDX-License-Identifier: Apache-2.0 */
/* The process's own resources: its pid, and the library's internal
 * descriptors (staging files, logs, the private directory). */
#ifndef SFS_SYS_SELF_H
#define SFS_SYS_SELF_H

#include <stdbool.h>

/* getpid() without a system call (glibc does not cache it); refreshed in a
 * forked child. */
int sfs_self_pid(void);
void sfs_self_pid_reset(void);

/* A duplicate of fd with O_CLOEXEC at or above sfs_g.fd_floor, or, once
 * the program has lowered RLIMIT_NOFILE to the floor or below, the highest
 * free number in the upper half of its new limit; -1 (errno) when there is
 * none. */
int sfs_internal_dup(int fd);

/* Moves an internal fd to a high number with O_CLOEXEC and marks it internal
 * in the fd table, so the application can neither see nor close it. Returns
 * the new fd (the old one is closed) or the old one if moving failed. */
int sfs_internal_fd(int fd);
void sfs_internal_close(int fd);

/* The private directory (sfs_g.priv_dir) as an internal descriptor,
 * opened at its first use: a process that stages nothing and keeps no log
 * never has one (an internal descriptor is moved above 512, which grows
 * the kernel's descriptor table in every such process, and its copy at
 * every fork). It must still be the directory the start checked
 * (sfs_g.priv_ino on sfs_g.root_dev): otherwise -1 with errno ESTALE,
 * and every call made with it fails (EBADF) as a call in it would. */
int sfs_privdir(void);

/* How an fd is marked internal (or unmarked) in the fd table, which lives
 * above this layer (fs/fdtable.h). Registered by start-up before the first
 * internal fd is made; until then nothing is marked. */
void sfs_internal_set_marker(void (*mark)(int fd, bool internal));

#endif
