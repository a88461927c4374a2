/* SPDX-License-Identifier: Apache-2.0 */
/* Taking descriptors back after a fork.
 *
 * A fork demotes every managed file (process.h): parent and child share the
 * open files, and a shared offset or a child's write through the kernel
 * cannot be followed from one process's user space. The sharing ends when
 * no other process holds those open files any more: a child that exits at
 * once (a shell's subshell, system()-style helpers, a forking server's
 * short-lived worker) leaves the parent the only holder. Then the parent
 * manages the descriptors again, with the kernel's offset and status flags
 * as they are then.
 *
 * The watch: the descriptors a fork demoted (recorded while the atfork
 * handler demotes them), and a pidfd of every child forked while any is
 * watched (from the fork wrapper, which sees the child's pid). On a later
 * call through a watched descriptor, at most once per clock tick: when
 * every watched child has exited, the other processes' descriptors are
 * checked (/proc/PID/fd, same file, then kcmp KCMP_FILE): a grandchild or a
 * process sent the descriptor may still hold the open file, and then that
 * descriptor stays with the kernel for good. A fork the wrapper did not see
 * (glibc's own callers, daemon()) leaves no pidfd: the watch then never
 * takes anything back. Descriptors of one open file (dups) come back as one
 * managed open file. */
#ifndef SFS_FS_FORKWATCH_H
#define SFS_FS_FORKWATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

struct sfs_file;

/* Whether anything is watched (the wrappers' miss path reads it). */
extern atomic_bool sfs_forkwatch_active;

/* atfork prepare (before the demotions) and parent handlers. */
void sfs_forkwatch_prepare(void);
void sfs_forkwatch_parent(void);

/* A descriptor the fork being prepared demoted. */
void sfs_forkwatch_demoted(int fd, dev_t dev, ino_t ino);

/* The fork wrapper, in the parent: the child's pid, or -1 when the fork
 * failed (its prepare handler ran all the same). */
void sfs_forkwatch_born(pid_t pid);

/* The fork wrapper, around the real fork (true before, false after). */
void sfs_forkwatch_wrapper(bool inside);

/* fd is handed to something the library cannot follow (stdio, the
 * application's own leases or flock, a socket): never taken back. */
void sfs_forkwatch_forget(int fd);

/* A call through fd, which the fd table does not manage: returns fd's
 * managed file (a reference taken) when the watch gave it back now. */
struct sfs_file *sfs_forkwatch_take_back(int fd);

/* A forked child starts with nothing watched. */
void sfs_forkwatch_reset_child(void);

#endif
