/* SPDX-License-Identifier: Apache-2.0 */
/* Leases: how a process knows that nobody else uses a file it serves from
 * user space.
 *
 * The library serves a file from its mappings and stages its appends only
 * while it holds a kernel lease on it (fcntl F_SETLEASE): a write lease when
 * its descriptor is writable, a read lease otherwise. The kernel grants a
 * write lease only while no other open file description of the inode
 * exists anywhere (no other process, and no second open in this one), and a
 * read lease only while nobody has the file open for writing. Every later
 * open() of the file that conflicts, by any process with or without the
 * library, and every truncate(2) of it, first signals the holder and waits
 * until the holder lets go. The library's service thread then relinks the
 * staged window, retires the file's log records (sync, strict), and releases
 * the lease; only then does the other open return. So whoever opens the file
 * next, a program under SplitFS or not, sees every byte already written, and
 * nobody changes the file behind a holder's back.
 *
 * Without a lease (the file was open elsewhere, the caller is not the file's
 * owner and has no CAP_LEASE, the file system has no leases) the library
 * leaves the data to the kernel: reads are pread, writes pwrite, the size
 * the kernel's, exactly as without the library. It takes a lease again once
 * the file is used often enough (LEASE_AFTER operations, lease.c) and the
 * kernel grants one.
 *
 * The break signal (SFS_LEASE_SIG) is sent to the service thread alone
 * (F_SETOWN_EX, F_OWNER_TID), which waits for it with sigwaitinfo. Taking a
 * lease makes the kernel aim the signal at the whole process until the
 * owner is set again a moment later: a process-wide handler forwards such a
 * signal to the service thread. The application's own use of the signal
 * number is kept: its handler, as it set it, runs for every instance that
 * is not a lease break (interpose/signal.c). */
#ifndef SFS_FS_LEASE_H
#define SFS_FS_LEASE_H

#include <signal.h>
#include <stdbool.h>

#include "inode.h"

/* The signal number of lease breaks (a real-time signal: queued, and it
 * carries the descriptor in si_fd). */
int sfs_lease_sig(void);

/* Whether the inode is leased now (readers: under the read barrier). */
static inline bool sfs_inode_leased(const struct sfs_inode *in)
{
	return atomic_load_explicit(&in->leased, memory_order_acquire);
}

/* Takes the lease if the inode may have one now. Caller holds the inode
 * lock. On success the inode's size is the kernel's (it may have changed
 * while the file was not leased) and the inode serves from user space.
 * force: do not wait for LEASE_AFTER operations (sync and strict modes
 * must log every write). */
bool sfs_lease_take_locked(struct sfs_inode *in, bool force);

/* The file was read or written through the kernel as often as an inode
 * would have been before its lease (a pending descriptor, fdtable.h): the
 * inode's next data operation asks for the lease. */
void sfs_lease_due(struct sfs_inode *in);

/* The same from a path that does not hold the lock (readers, the stores
 * of a sharing session: force, as they are rate-limited already). */
bool sfs_lease_try(struct sfs_inode *in, bool force);

/* Lets go of the lease: relinks the staged window, retires the log records
 * (sync, strict), stops serving from user space, releases the lease.
 * Caller holds the inode lock. Returns the relink's error, if any (the
 * lease is released anyway). */
int sfs_lease_drop_locked(struct sfs_inode *in);

/* Drops the leases of every inode (before fork, exec, spawn: a leased open
 * file shared with another process would not hear of that one's use). */
void sfs_lease_drop_all(void);

/* The application's view of the lease signal's disposition (the signal
 * wrappers call it for that number). */
int sfs_lease_app_action(const struct sigaction *act, struct sigaction *old);

/* Whether the library handles the signal number itself (lease breaks). */
bool sfs_lease_owns(int sig);

/* A forked child: no service thread, no leases. */
void sfs_lease_reset_child(void);

#endif
