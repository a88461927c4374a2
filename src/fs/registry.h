/* SPDX-License-Identifier: Apache-2.0 */
/* The registry: per-file state shared by every SplitFS process on one file
 * system, in a segment in /dev/shm (so a reboot clears it). It lets several
 * processes use one file without staging over each other:
 *
 *  - Each entry lists the processes that have the file open (managed or
 *    left to the kernel). A process may stage appends for a file only while
 *    it is alone in that list; as soon as a second process opens the file,
 *    the entry is marked shared and every process leaves the file to the
 *    kernel (which then provides POSIX sharing: one size, O_APPEND, ...).
 *  - The entry's robust, process-shared mutex is the inode's writer lock in
 *    every process. The process that opens the file second takes that lock
 *    and relinks the first one's staged data itself (reading the staging
 *    file through /proc/<pid>/fd), bumps the entry's generation, and only
 *    then returns from open(): it never sees a file that lacks data the
 *    first process already wrote. The first process notices the new
 *    generation at its next call on the file and drops its (relinked)
 *    window.
 *
 * Processes that do not use SplitFS are not in the registry: they see
 * appends of a SplitFS process at its fsync or close (DESIGN.md). */
#ifndef SFS_FS_REGISTRY_H
#define SFS_FS_REGISTRY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SFS_REG_PIDS 6 /* processes tracked per file; more makes it shared */
#define SFS_REG_PROCS 256 /* processes with an operation log at once */

/* One file. Shared memory layout: static_assert'ed in registry.c. */
struct sfs_reg_entry {
	uint64_t dev;
	uint64_t ino;		 /* 0: free; SFS_REG_TOMBSTONE: deleted */
	pthread_mutex_t lock;	 /* robust, process-shared */
	_Atomic uint32_t gen;	 /* bumped when another process relinked our window */
	_Atomic uint32_t shared; /* more than one process has the file open */
	int32_t owner;		 /* the process whose window is described below */
	int32_t staged;		 /* owner has a staging window open */
	int32_t stage_fd;	 /* owner's staging file descriptor */
	int32_t kfd;		 /* owner's descriptor on the file (O_RDWR) */
	int64_t base;		 /* window [base, size) */
	int64_t size;
	int32_t pids[SFS_REG_PIDS];
	uint16_t ring_shift;	 /* 0: staging file at the file's offsets;
				  * else a ring of 1 << ring_shift bytes */
	int16_t log_slot;	 /* owner's operation log (sfs_reg_proc), or -1 */
	uint32_t log_file;	 /* the file's id in that log */
};

/* A process's operation log (sync/strict modes), shared so that another
 * process taking over one of its files can append a COMMIT record to it.
 * Writers claim record space by compare-and-swap on `tail` and count
 * themselves in `inflight` until the record (and the write it logs) is
 * done; a checkpoint sets SFS_LOG_TAIL_CLOSED in `tail`, waits for
 * `inflight` to drain, and reopens the log at a new generation. `lock`
 * serialises only setting the slot up and giving it back. */
struct sfs_reg_proc {
	pthread_mutex_t lock;	 /* robust, process-shared */
	int32_t pid;		 /* 0: free */
	uint32_t spare;
	_Atomic uint64_t gen;	 /* current generation */
	_Atomic uint64_t tail;	 /* next free byte, | SFS_LOG_TAIL_CLOSED */
	_Atomic uint64_t seq;	 /* next record number */
	uint64_t size;		 /* the log file's size */
	_Atomic uint32_t inflight;
	uint32_t spare2;
	char path[168];		 /* the log file (absolute) */
};

#define SFS_LOG_TAIL_CLOSED (1ull << 63)

/* Maps (creating if needed) the registry of the managed file system.
 * Returns 0 or -errno; without it, files are coordinated within the process
 * only (a warning says so). */
int sfs_registry_init(void);

/* Registers this process as having (dev, ino) open. Relinks another live
 * process's window first if there is one. *alone: no other process has it
 * open, so this one may stage. NULL: no registry (or it is full). */
struct sfs_reg_entry *sfs_reg_join(dev_t dev, ino_t ino, bool *alone);

/* This process no longer has the file open. */
void sfs_reg_leave(struct sfs_reg_entry *e);

/* Registers this process for a file it leaves to the kernel, for good: the
 * entry keeps the pid until the process dies. */
void sfs_reg_pin(dev_t dev, ino_t ino);

/* Before this process truncates (dev, ino) through the kernel (an O_TRUNC
 * open, truncate(path)): relink another process's window first, so the
 * truncation removes it as it would have removed data written through the
 * kernel, instead of the window coming back at that process's next relink. */
void sfs_reg_flush_others(dev_t dev, ino_t ino);

/* Locks e->lock, repairing the entry if its last holder died. */
void sfs_reg_lock(struct sfs_reg_entry *e);
void sfs_reg_unlock(struct sfs_reg_entry *e);
/* The entry's lock if it is free now (a dead holder's is taken over). */
bool sfs_reg_trylock(struct sfs_reg_entry *e);

/* The owner describes its window (caller holds e->lock). */
void sfs_reg_publish(struct sfs_reg_entry *e, bool staged, int stage_fd, int64_t ring_cap,
		     int kfd, int64_t base, int64_t size);

/* A log slot for this process (NULL: no registry, or none free). */
struct sfs_reg_proc *sfs_reg_proc_claim(void);
void sfs_reg_proc_release(struct sfs_reg_proc *p);
int sfs_reg_proc_index(const struct sfs_reg_proc *p);
struct sfs_reg_proc *sfs_reg_proc_at(int index);

/* Locks a log slot, repairing it if the holder died. */
void sfs_reg_proc_lock(struct sfs_reg_proc *p);

#endif
