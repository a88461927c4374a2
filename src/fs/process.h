/* SPDX-License-Identifier: Apache-2.0 */
/* Descriptors shared with another process, and what happens to managed files
 * at fork, exec and spawn.
 *
 * Staging is private to a process, and a kernel file offset shared with a
 * child cannot be kept in user space. So whenever a managed descriptor
 * becomes shared with another process (fork, spawn, exec), the library first
 * makes the kernel's view complete (relinks staged data, writes each offset
 * back with lseek) and then "demotes" the file: its descriptors are dropped
 * from the fd table and every later call on them goes to the kernel, which
 * gives POSIX behaviour (shared offsets, O_APPEND) by construction. Files
 * opened afterwards are managed again. Demotion is also how the library hands
 * a file to code paths it cannot follow: application mmap, stdio, O_DIRECT. */
#ifndef SFS_FS_PROCESS_H
#define SFS_FS_PROCESS_H

#include <stdbool.h>

#include "inode.h"

/* Leaves the inode to the kernel in this process from now on. */
void sfs_demote_inode(struct sfs_inode *in);

/* Demotes every managed descriptor, or only those without FD_CLOEXEC. */
void sfs_demote_fds(bool inheritable_only);

/* Before execve/posix_spawn/fork: relink everything, write offsets back. */
void sfs_prepare_share(void);

/* pthread_atfork handlers. */
void sfs_atfork_prepare(void);
void sfs_atfork_parent(void);
void sfs_atfork_child(void);

/* At start-up: files inherited from the previous image stay with the kernel. */
void sfs_demote_inherited(void);

#endif
