/* SPDX-License-Identifier: Apache-2.0 */
/* Leaving files to the kernel, and what happens to managed files at fork,
 * exec and spawn.
 *
 * Staging is private to a process, and a kernel file offset shared with a
 * child cannot be kept in user space. So whenever a managed descriptor
 * becomes shared with another process (fork, spawn, exec), the library first
 * makes the kernel's view complete and then "demotes" the file: the staged
 * window is relinked, the lease let go, and every descriptor of the file
 * gets back the open file the application made, as the application made it
 * (access mode, O_APPEND and the other status flags, its offset; inode.h
 * says how the library adapts and shares them meanwhile). The descriptors
 * leave the fd table and every later call on them goes to the kernel, which
 * gives POSIX behaviour (shared offsets, O_APPEND) by construction. Demotion
 * is also how the library hands a descriptor to code paths it cannot
 * follow: application mmap, stdio's fdopen, O_DIRECT, the application's own
 * leases and flock locks. A later open of the file is managed again (and
 * stays unleased, so on the kernel's path, while the demoted open file
 * exists). */
#ifndef SFS_FS_PROCESS_H
#define SFS_FS_PROCESS_H

#include <stdbool.h>

#include "inode.h"

/* Leaves the inode's descriptors to the kernel from now on. */
void sfs_demote_inode(struct sfs_inode *in);

/* Before a call whose kernel semantics depend on the application's own
 * open file (its flags, its offset, its access mode): demotes fd's file if
 * it is managed. */
void sfs_demote_fd(int fd);

/* Demotes every managed file, or only those with a descriptor without
 * FD_CLOEXEC (which a new program or a spawned child inherits). */
void sfs_demote_fds(bool inheritable_only);

/* Before execve/posix_spawn/fork: relink everything, let every lease go,
 * and demote what the other process will share. */
void sfs_prepare_share(bool inheritable_only);

/* The application's call failed with EMFILE: the library gives back its
 * own descriptors (closed files' inodes, pooled stores; its files are left
 * to the kernel, their descriptors closed) and manages no new file from
 * now on, so that a program that can open N files under the kernel can
 * open N under the library. Returns whether the call is worth a retry. */
bool sfs_fds_relieve(void);

/* A call that makes a descriptor, retried once when the application met
 * RLIMIT_NOFILE because of the library's own descriptors. */
#define SFS_FD_RETRY(type, failed, call)                                                           \
	({                                                                                         \
		type r_ = (call);                                                                  \
		if (r_ == (failed) && errno == EMFILE && sfs_live() && sfs_fds_relieve())          \
			r_ = (call);                                                               \
		r_;                                                                                \
	})

/* Around a vfork (interpose/vfork.c), in the parent: what the atfork
 * handlers do for a fork, less what only a copy of the parent's memory
 * needs (the child's resets, the locks a copy must find free). */
void sfs_vfork_prepare(void);
void sfs_vfork_parent(pid_t pid);

/* pthread_atfork handlers. */
void sfs_atfork_prepare(void);
void sfs_atfork_parent(void);
void sfs_atfork_child(void);

/* At start-up, sync and strict modes: descriptors inherited from the
 * previous program are the kernel's, their writes made durable per call. */
void sfs_demote_inherited(void);

/* Before the start: whether the process holds a descriptor (of any type)
 * on the file system of root, which it can only have inherited; true when
 * it cannot tell. */
bool sfs_holds_root_descriptor(const char *root);

#endif
