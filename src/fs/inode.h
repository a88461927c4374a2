/* SPDX-License-Identifier: Apache-2.0 */
/* Inode objects: the per-process state of one managed file, shared by every
 * descriptor of it.
 *
 * Layout of a file's data. The kernel file (the "target") holds the bytes
 * [0, ksize). While a staging window is open (staged == true), the bytes
 * [base, size) live in the inode's staging store (staging/stage.h), where
 * base = ksize rounded down to a block: the window starts by copying the
 * target's partial last block into the store, so the whole window can
 * later be relinked as whole blocks. Reads and writes below the boundary
 * (base when staged, ksize otherwise) use the target's mappings; at or above
 * it, the staging file's. Relink moves [base, size) into the target and makes
 * ksize == size again.
 *
 * Concurrency. Writers and structural changes (relink, truncate) hold the
 * inode lock (sfs_inode_lock: the registry entry's process-shared mutex).
 * Readers take no lock: they announce themselves in a reader count and run
 * only while the barrier is open; a structural change closes the barrier and
 * waits for readers to drain, because it moves or unmaps what they read.
 * Plain writes never close the barrier, so readers never wait for them. */
#ifndef SFS_FS_INODE_H
#define SFS_FS_INODE_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../map/maptab.h"
#include "../staging/stage.h"
#include "registry.h"

/* Returned by fs-layer calls when the file was just left to the kernel
 * (shared with another process): the wrapper makes the call there. Below
 * every errno, as project codes are (style.md). */
#define SFS_E_KERNEL (-100001)

struct sfs_inode {
	dev_t dev;
	ino_t ino;
	int kfd;	/* the library's own O_RDWR (or O_RDONLY) descriptor */
	bool kfd_shared; /* kfd is a dup of the application's first descriptor
			  * (same open file: its O_APPEND would be ours) */
	bool writable;	/* kfd is O_RDWR */

	pthread_mutex_t own_lock;	/* the writer lock without a registry */
	struct sfs_reg_entry *reg;	/* shared state (registry.h); its robust
					 * mutex is the writer lock in every process */
	uint32_t reg_gen;		/* reg->gen as this process last saw it */
	atomic_int readers;
	atomic_int barrier; /* non-zero: a structural change is running */

	_Atomic int64_t ksize; /* size of the kernel file as this process left it */
	_Atomic int64_t size;  /* logical size, including staged bytes */
	_Atomic int64_t base;  /* start of the staging window (valid when staged) */
	atomic_bool staged;
	/* Holes inside the window (writes past the end), so a copy relink
	 * leaves them holes instead of writing zeros (SEEK_HOLE, du, cp
	 * --sparse see what the kernel would show). -1: too many to track. */
	struct sfs_hole {
		int64_t from, to;
	} holes[4];
	int nholes;
	_Atomic int64_t staged_mtime; /* ns: the last staged write (stat shows it) */

	struct sfs_stage stage;
	struct sfs_maptab maps; /* mappings of the target */

	/* Sequential writers (under the lock): where the last write ended, and
	 * how far the target's pages are already populated writable (see
	 * populate_ahead in data.c). */
	int64_t wr_next;
	int64_t t_populated;
	/* A store through the mapping dirties the whole page-cache folio (up
	 * to 2 MiB on XFS), which the next fsync writes back in full; a
	 * write(2) dirties only the blocks it changes. So when the application
	 * fsyncs after overwriting little, or scattered, data (a database
	 * committing pages), overwrites go through the kernel (small_syncs).
	 * Decided at each fsync from what was overwritten since the previous
	 * one: bytes, and the jumps between non-contiguous overwrites (each
	 * run may dirty two folios more than it wrote). */
	atomic_bool small_syncs;
	_Atomic int64_t overwritten;
	_Atomic int64_t overwrite_runs;

	int nwriters; /* application files open for writing (under the lock) */

	/* POSIX mode on DAX (dax.c, data.c, flush.c): writable chunks are
	 * mapped MAP_SYNC and, once the file is synced, every store below the
	 * window is flushed and fenced before the write returns, so fsync
	 * needs no system call while kdirty is false. kdirty: since the last fsync the kernel holds
	 * changes of this file only its fsync makes durable (a pwrite, a
	 * relink, a truncation, a call passed to the kernel, a store made
	 * before the flush primitives were known, or unknown history: a new
	 * or cached inode object). Stores are flushed only once the application
	 * has synced the file (fsynced): until then they are plain stores, as
	 * in the page cache, and the first fsync is the kernel's (kdirty), so a
	 * file nobody syncs pays nothing for durability. */
	bool dax;
	atomic_bool fsynced; /* the application syncs this file: flush stores */
	atomic_bool kdirty;
	_Atomic uint64_t synced_meta; /* sfs_meta_epoch at the last kernel fsync */

	/* The operation log (sync/strict; oplog.h), under the lock: the file's
	 * id in the log's generation log_gen, and whether records since its
	 * last COMMIT exist. */
	uint32_t log_file;
	uint64_t log_gen;
	bool logged;
	/* The application took POSIX record locks on the file (fcntl F_SETLK*,
	 * lockf). Closing any descriptor of a file drops all of the process's
	 * locks on it, so until the last application file closes the library
	 * closes none of its own: kfd is not swapped, an old one is kept in
	 * stale_kfd. */
	atomic_bool posix_locks;
	int stale_kfd;

	/* Bookkeeping under the inode-table lock. */
	int refs;		/* files (and transient users) referring to it */
	struct sfs_inode *hnext;
	struct sfs_inode *lru_prev, *lru_next; /* the closed-inode cache */
};

/* --- readers ------------------------------------------------------------ */

void sfs_read_wait(struct sfs_inode *in);

/* The reader count and the barrier are both seq_cst: a reader that saw the
 * barrier open is counted before the closer looks at the count. */
static inline void sfs_read_enter(struct sfs_inode *in)
{
	for (;;) {
		atomic_fetch_add(&in->readers, 1);
		if (!atomic_load(&in->barrier))
			return;
		atomic_fetch_sub(&in->readers, 1);
		sfs_read_wait(in);
	}
}

static inline void sfs_read_exit(struct sfs_inode *in)
{
	atomic_fetch_sub_explicit(&in->readers, 1, memory_order_release);
}

/* --- the writer lock and other processes ---------------------------------- */

void sfs_inode_lock(struct sfs_inode *in);
void sfs_inode_unlock(struct sfs_inode *in);
/* The lock if it is free now; false otherwise. */
bool sfs_inode_trylock(struct sfs_inode *in);
/* The inodes whose lock this thread holds (at most max into out). */
int sfs_inode_held(struct sfs_inode **out, int max);

/* Caller holds the lock. Absorbs a relink another process did of this
 * process's window (drops the window, re-reads the size), and returns true
 * when the file is now shared with another process: the caller must leave it
 * to the kernel (sfs_demote_inode, after unlocking). */
bool sfs_inode_contended_locked(struct sfs_inode *in);

/* The same test without the lock, for readers (one shared-memory load). */
static inline bool sfs_inode_contended(const struct sfs_inode *in)
{
	return in->reg && (atomic_load_explicit(&in->reg->shared, memory_order_relaxed) ||
			   atomic_load_explicit(&in->reg->gen, memory_order_relaxed) != in->reg_gen);
}

/* Describes the staging window in the registry (caller holds the lock). */
void sfs_inode_publish_locked(struct sfs_inode *in);

/* Close and reopen the barrier; the caller holds the inode lock. */
void sfs_barrier_close(struct sfs_inode *in);
void sfs_barrier_open(struct sfs_inode *in);

/* --- lifetime ----------------------------------------------------------- */

/* The inode object for the regular file open at appfd (st from fstat of it),
 * created or found, with a reference for the caller. NULL when the file
 * cannot be managed (the library's own descriptor could not be opened). */
struct sfs_inode *sfs_inode_open(int appfd, const struct stat *st, int flags);

/* A reference to the inode (dev, ino) if this process has it, else NULL. */
struct sfs_inode *sfs_inode_find(dev_t dev, ino_t ino);

void sfs_inode_put(struct sfs_inode *in);

/* The application set O_APPEND on an open file the library's descriptor
 * may share: the library opens a private one (its pwrites must not append). */
void sfs_inode_unshare_kfd(struct sfs_inode *in);

/* A file open for writing was released. */
void sfs_inode_writer_gone(struct sfs_inode *in);

/* Evicts closed inodes that still hold a writable descriptor (which makes
 * execve of the file fail with ETXTBSY): from the background thread a
 * moment after their close, and before fork, exec and spawn. */
void sfs_inode_evict_writable(void);

/* The file was unlinked or renamed over: drop a cached (closed) inode now so
 * its space is freed; an open one stays, as POSIX requires. */
void sfs_inode_forget(dev_t dev, ino_t ino);

/* Calls fn on every inode with a file open, with a reference held. */
void sfs_inode_foreach(void (*fn)(struct sfs_inode *, void *), void *arg);

/* Number of inodes that hold staged data (a cheap "anything to relink?"). */
int sfs_inode_staged_count(void);
void sfs_inode_staged_changed(int delta);

/* Frees every inode object without flushing (a forked child, whose staged
 * data belongs to the parent). */
void sfs_inode_table_reset(void);

/* Files this process must leave to the kernel from now on: opened O_DIRECT,
 * mapped by the application, handed to stdio, shared with a forked child. */
bool sfs_demoted(dev_t dev, ino_t ino);
void sfs_demoted_add(dev_t dev, ino_t ino);

/* A forked child registers itself for every file it inherited. */
void sfs_demoted_pin_all(void);

/* A forked child: the sets' locks are usable again (kernel_files.c). */
void sfs_kernel_sets_reset(void);

/* Files on which the process took POSIX record locks (through any
 * descriptor): the library must not close a descriptor of them while the
 * application may hold locks (a close drops them all). */
bool sfs_posix_locked(dev_t dev, ino_t ino);
void sfs_posix_locked_add(dev_t dev, ino_t ino);

/* Whether the file's data lies on DAX as this process uses it: POSIX mode
 * on a DAX file (in->dax), or sync/strict modes with the log on DAX (their
 * writes are then stores, logged.c). No page cache: a store dirties no
 * folio and a write fault costs the same as a populate (fs/dax.c). */
bool sfs_inode_on_dax(const struct sfs_inode *in);

/* Decides in->dax (and maps.sync) for the inode's descriptor (fs/dax.c). */
void sfs_inode_dax_setup(struct sfs_inode *in);

/* Whether this inode's stores are flushed by the library (POSIX mode on
 * DAX, MAP_SYNC mappings, synced by the application before, libpmem2's
 * primitives known; if they are not, learning them starts in the
 * background). Caller holds the inode lock. */
bool sfs_inode_dax_flushes(struct sfs_inode *in);

/* Starts learning libpmem2's primitives in the background if this is a
 * POSIX-mode DAX file and no one has (the application synced it: its
 * stores will be flushed from now on). */
void sfs_inode_dax_learn(struct sfs_inode *in);

/* Counts the metadata calls the kernel served (chmod, utimes, rename, ...:
 * the "durable" rows of entrypoints.tsv). The kernel's fsync of a file
 * would make such a change of it durable; the DAX fsync without a system
 * call (flush.c) is taken only while none happened since the file's last
 * kernel fsync (per process, not per file: rare enough). */
extern _Atomic uint64_t sfs_meta_epoch;
static inline void sfs_meta_changed(void)
{
	atomic_fetch_add_explicit(&sfs_meta_epoch, 1, memory_order_relaxed);
}

/* The kernel changed the file in a way only its fsync makes durable. */
static inline void sfs_inode_kernel_changed(struct sfs_inode *in)
{
	if (!atomic_load(&in->kdirty)) /* no store to a shared line per write */
		atomic_store(&in->kdirty, true);
}

/* Refreshes ksize/size from the kernel's size (fstat under the lock) when
 * nothing is staged: another process may have grown or shrunk the file.
 * Caller holds the inode lock. */
void sfs_inode_resync_locked(struct sfs_inode *in);

#endif
