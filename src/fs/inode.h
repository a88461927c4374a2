/* SPDX-License-Identifier: Apache-2.0 */
/* Inode objects: the per-process state of one managed file, shared by every
 * descriptor of it.
 *
 * Layout of a file's data. The kernel file (the "target") holds the bytes
 * [0, ksize). While a staging window is open (staged == true), the bytes
 * [base, size) live in the inode's staging store (staging/stage.h): base is
 * ksize for a ring, and ksize rounded down to a block for a file store,
 * whose window starts with a copy of the target's partial last block so
 * that it relinks as whole blocks. Reads and writes below the boundary
 * (base when staged, ksize otherwise) use the target's mappings; at or above
 * it, the store's. Relink moves [base, size) into the target and makes
 * ksize == size again. A write past the end (a hole) is the kernel's.
 *
 * Concurrency. Writers and structural changes (relink, truncate) hold the
 * inode lock. Readers take no lock: they announce themselves in a reader
 * count and run only while the barrier is open; a structural change closes
 * the barrier and waits for readers to drain, because it moves or unmaps
 * what they read.
 *
 * Other processes. The inode serves the file from user space only while
 * this process holds a kernel lease on it (lease.h): then nobody else has
 * the file open, and nobody can open or truncate it before the library has
 * relinked its window and let go. Without a lease every operation is the
 * kernel's (pread, pwrite, the kernel's size).
 *
 * One open file description. The library's descriptor (kfd) is a duplicate
 * of the application's: an application's O_WRONLY open is replaced by an
 * O_RDWR one of the same file (a mapping needs read access) before the
 * file's first lease (not at the open: a file written a few times and
 * closed never is, and stays on the kernel's path), O_APPEND is
 * kept off the kernel's open file while the library serves it (its
 * pwrites must not append; the library appends itself), and a second open
 * of the same file in this process shares the first one's open file
 * (dup3), except a reader's, which keeps its own until the file is leased
 * (in->apart: a file reopened to be read a few times pays no dup3). When
 * leased, the kernel sees one open file per process and file, which is
 * what a lease needs; the application's view of each of its opens (its
 * flags, its offset) lives in its struct sfs_file, and is given back to
 * the kernel when the file is left to it (process.h). A process holding
 * POSIX record locks on the file is an exception: closing any descriptor
 * of the file would drop them, so its opens stay apart (and unleased).
 *
 * Plain writes never close the barrier, so readers never wait for them:
 * a read that overlapped a write of its range copies again (versions.h). */
#ifndef SFS_FS_INODE_H
#define SFS_FS_INODE_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../map/maptab.h"
#include "../oplog/oplog.h"
#include "../staging/stage.h"
#include "../util/compiler.h"
#include "../util/signals.h"
#include "versions.h"

/* Returned by fs-layer calls when the file was just left to the kernel
 * (process.h): the wrapper makes the call there. Below every errno, as
 * project codes are (style.md). */
#define SFS_E_KERNEL (-100001)

#define SFS_READER_SLOTS 16

/* Appends of at most this many bytes between two syncs of a file are the
 * kernel's from the second sync on (small_appends below). */
#define SFS_SMALL_APPENDS (16 << 10)

/* This thread's reader slot (assigned round robin at its first read). */
extern __thread int sfs_reader_slot __attribute__((tls_model("initial-exec")));
int sfs_reader_slot_assign(void);

struct sfs_written_pages;
struct sfs_recent_blocks;

struct sfs_inode {
	dev_t dev;
	ino_t ino;
	int kfd;	/* the library's descriptor: a dup of the application's open */
	bool writable;	/* kfd is O_RDWR: the library writes through mappings */
	bool readable;	/* kfd is not O_WRONLY */
	bool kwritable; /* kfd is open for writing (O_RDWR, or an O_WRONLY the kernel serves) */
	bool mergeable; /* another open of the file may share kfd's open file */
	/* kfd is still the application's O_WRONLY open: replaced by an O_RDWR
	 * one before the first lease (sfs_openfile_widen), under the lock. */
	bool widen;
	/* kfd's open file is still an O_APPEND open's own, with O_APPEND (a
	 * write-only open not widened yet): a write the library does not see
	 * (a shell's `echo >> log`) appends where the kernel's would, even
	 * after another process appended. Taken off, under the lock, before
	 * the library first writes through it at an offset
	 * (sfs_openfile_drop_append); a widen replaces the open file. */
	bool kappend;
	/* Some application reader has an open file of its own (reuse): merged
	 * into kfd's before a lease (sfs_openfile_merge), under the lock. */
	bool apart;

	pthread_mutex_t lock; /* the writer lock */
	atomic_int barrier;   /* non-zero: a structural change is running */
	/* Readers in a read section, counted on the slot of their thread
	 * (sfs_reader_slot), each on its own cache line: readers on many CPUs
	 * do not write one shared line. The sum is what counts. */
	struct {
		_Alignas(64) atomic_int n;
		/* What this slot's threads overwrote without the inode lock
		 * (overwrite_unlocked; small_syncs below): on the line the
		 * write's read section writes anyway. */
		_Atomic int64_t overwritten, runs;
		/* Where this slot's last such write ended: a write that starts
		 * there continues a sequential run (prepared ahead, ahead.c). */
		_Atomic int64_t next;
		/* This slot's strict-mode writes logged without the inode
		 * lock and not yet applied (logged.c: a commit waits). */
		atomic_int logging;
	} readers[SFS_READER_SLOTS];

	/* The lease (lease.h). leased: served from user space; changed under
	 * the lock with the barrier closed. The rest under the lock. */
	atomic_bool leased;
	/* From just before F_SETLEASE until leased is set (or the try
	 * failed): a break may come meanwhile (lease.c, drop_if_broken). */
	atomic_bool lease_taking;
	bool lease_never;		/* the kernel will not lease it (owner, fs) */
	int lease_ops;			/* data operations since the last try */
	_Atomic int64_t lease_retry_at; /* ns (monotonic): not before (sfs_lease_try) */
	int64_t lease_backoff;

	/* A sharing session (share.h): while the file is not leased, POSIX-
	 * mode overwrites are stores (data.c: overwrite_shared). Set under the
	 * lock; ended when the lease comes back or the inode goes. share_never:
	 * the file is not the user's alone to write; share_retry_at: ns
	 * (monotonic) before which a refused session is not asked for again. */
	atomic_bool share;
	bool share_never;
	int64_t share_retry_at;

	_Atomic int64_t ksize; /* size of the kernel file as this process left it */
	_Atomic int64_t size;  /* logical size, including staged bytes */
	_Atomic int64_t base;  /* start of the staging window (valid when staged) */
	atomic_bool staged;
	/* Bytes of the process's space reservation the window holds
	 * (staging/reserve.h), under the lock. */
	int64_t reserved;
	int64_t reserve_spare;	      /* of reserved: not yet needed by a staged byte */
	int reserve_shard;	      /* staging/reserve.h: where reserved came from */
	_Atomic int64_t staged_mtime; /* ns: the last staged write (stat shows it) */

	struct sfs_stage stage;
	struct sfs_maptab maps; /* mappings of the target */
	/* Readers' consistency against this process's writers (versions.h);
	 * written under the lock. The inode is allocated 64-byte aligned. */
	struct sfs_versions ver;

	/* Sequential writers (under the lock): where the last write ended, and
	 * how far the target's pages are already prepared for its stores (see
	 * ahead.c). */
	_Atomic int64_t wr_next; /* read without the lock by overwrite_unlocked */
	/* Reset to 0 by fsync without the lock (writeback write-protects the
	 * pages again): a reset lost to a racing writer only costs faults. */
	_Atomic int64_t t_populated;
	/* Counts those resets: the epoch of the chunks' words (ahead.c). */
	_Atomic uint32_t wb_epoch;
	/* Regions in a row found in 4 KiB folios; from 2 on, pages are
	 * populated ahead, not unmapped (ahead.c). */
	atomic_int small_probes;
	/* Such a file's pages written since the last writeback, as far as a
	 * fixed table remembers them (ahead.c); NULL until it is small. */
	_Atomic(struct sfs_written_pages *) written;
	/* The blocks the library read or overwrote recently, which are taken
	 * as cached (coldwrite.c); NULL until a file larger than the cache is
	 * overwritten. */
	_Atomic(struct sfs_recent_blocks *) recent;
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
	/* Likewise for appends: when a sync finds that fewer than
	 * SFS_SMALL_APPENDS bytes were appended since the previous one (a log
	 * that syncs each record), a window would be opened, reserved and
	 * relinked for a few bytes, more than the kernel's write costs; the
	 * appends that follow are the kernel's (data.c), until that many
	 * bytes are appended without a sync. appended: since the last sync,
	 * added under the lock. */
	atomic_bool small_appends;
	_Atomic int64_t appended;
	/* POSIX mode's fdatasync served by the operation log (logsync.h).
	 * logsync: on for this file; set under the lock with the barrier
	 * closed, so that overwrites without the lock (which read it in their
	 * read section) take the locked path from then on. durable_end: the
	 * file was durable up to here (and in its shape) when last synced.
	 * other_dirty: since then, a change other than bytes written at or
	 * past durable_end. unseen: writes the library does not see may reach
	 * the file (a descriptor 0-2: kpos.h), so only the kernel's fsync can
	 * know what to make durable. ksyncs: the kernel's syncs in flight;
	 * streak: small syncs in a row; untimed: the file's times may not be
	 * durable (its last sync was the kernel's fdatasync). Under the lock,
	 * but logsync and durable_end (read by unlocked overwrites). */
	atomic_bool logsync;
	_Atomic int64_t durable_end;
	atomic_bool other_dirty;
	atomic_bool unseen;
	int ksyncs;
	int streak;
	bool untimed;

	int nwriters; /* application files open for writing (under the lock) */
	/* The target's chunks are mapped writable: only while the process has
	 * the file open for writing, and never under SPLITFS_PROTECT (then a
	 * write opens a window on its pages for its copy). A stray store into
	 * a mapping of a file the process may not write now faults. Changed
	 * under the lock with the barrier closed (readers map chunks). */
	atomic_bool maps_rw;

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
	 * file nobody syncs pays nothing for durability. dax: atomic, as a
	 * swap of kfd (install_rdwr) sets it again while a sync may read it. */
	atomic_bool dax;
	atomic_bool fsynced; /* the application syncs this file: flush stores */
	atomic_bool kdirty;
	/* sfs_meta_epoch (dax.h) at the last kernel fsync (not fdatasync):
	 * while it is the epoch now, no metadata call came since, and an
	 * fsync need only make the file's data durable (and its times:
	 * logsync.h). */
	_Atomic uint64_t synced_meta;

	/* The operation log (sync/strict): the file's place in it
	 * (oplog/oplog.h), under the lock except log.logged. log_closing:
	 * a commit, under the lock, keeps new unlocked logged writes out
	 * while it waits for those running (readers[].logging). */
	struct sfs_oplog_file log;
	atomic_int log_closing;
	/* Sync mode (logged.c). direct_appends: the file's appends made as the
	 * kernel's own durable writes (under the lock). dsync_untimed: a write
	 * inside the file went to it as the kernel's durable write (RWF_DSYNC,
	 * fdatasync), which need not make the file's times durable (no record
	 * carries them): the next fsync is the kernel's. One that grows the
	 * file makes its inode durable for the size, its times with it. */
	int direct_appends;
	atomic_bool dsync_untimed;
	/* The application took POSIX record locks on the file (fcntl F_SETLK*,
	 * lockf). Closing any descriptor of a file drops all of the process's
	 * locks on it, so until the last application file closes the library
	 * closes none of its own: kfd is not swapped, an old one is kept in
	 * stale_kfd. */
	atomic_bool posix_locks;
	int stale_kfd;

	/* Bookkeeping under the inode-table lock. */
	int refs;      /* files (and transient users) referring to it */
	bool unhashed; /* out of the table: destroyed when unused */
	struct sfs_inode *hnext;
	struct sfs_inode *lru_prev, *lru_next; /* the closed-inode cache */
};

/* --- lifetime ----------------------------------------------------------- */

/* The inode object for the regular file open at appfd (st from fstat of it),
 * created or found, with a reference for the caller. NULL when the file
 * cannot be managed (the library's own descriptor could not be opened).
 * cloexec: whether appfd is close-on-exec, -1 when the caller does not know.
 * *shared: appfd now refers to the inode's open file (kfd's); otherwise it
 * keeps its own, untouched. */
struct sfs_inode *sfs_inode_open(int appfd, const struct stat *st, int flags, int cloexec,
				 bool *shared);

/* A reference to the inode (dev, ino) if this process has it, else NULL. */
struct sfs_inode *sfs_inode_find(dev_t dev, ino_t ino);

/* A reference to the inode whose library descriptor is fd, or NULL. */
struct sfs_inode *sfs_inode_find_kfd(int fd);

/* Makes kfd the inode's descriptor (sfs_openfile_widen, _upgrade), with
 * the barrier closed: lock-free readers that use kfd do so in a read
 * section. Caller holds the inode lock. */
void sfs_inode_set_kfd(struct sfs_inode *in, int kfd);

void sfs_inode_put(struct sfs_inode *in);

/* A file open for writing was released. */
void sfs_inode_writer_gone(struct sfs_inode *in);

/* Evicts closed inodes that still hold a writable descriptor (which makes
 * execve of the file fail with ETXTBSY): from the background thread a
 * moment after their close, and before fork, exec and spawn. */
void sfs_inode_evict_writable(void);

/* The inode leaves the table (a later open of the file makes a new one);
 * the object lives until its last reference goes. */
void sfs_inode_unhash(struct sfs_inode *in);

/* Waits (at most a second) until no inode that left the table still holds
 * its descriptors; false when none did. */
bool sfs_inode_wait_destroyed(void);

/* Destroys every cached (closed) inode; returns how many. */
int sfs_inode_evict_cached(void);

/* The file was unlinked or renamed over: drop a cached (closed) inode now so
 * its space is freed; an open one stays, as POSIX requires. */
void sfs_inode_forget(dev_t dev, ino_t ino);

/* Calls fn on every inode with a file open, with a reference held. */
void sfs_inode_foreach(void (*fn)(struct sfs_inode *, void *), void *arg);

/* Calls fn on every inode with a file open, holding the table lock, if it
 * can be had without waiting; no allocation (process exit paths, which may
 * run in a signal handler). */
void sfs_inode_foreach_nowait(void (*fn)(struct sfs_inode *));

/* Whether the process has an inode of any file (a relaxed look: a caller
 * that finds none skips a lookup whose only use is an inode's). */
bool sfs_inode_any(void);

/* Number of inodes that hold staged data (a cheap "anything to relink?"). */
int sfs_inode_staged_count(void);
void sfs_inode_staged_changed(int delta);

/* Frees every inode object without flushing (a forked child, whose staged
 * data belongs to the parent). */
void sfs_inode_table_reset(void);

/* Gives the target's mappings the protection nwriters and SPLITFS_PROTECT
 * call for (maps_rw). Caller holds the lock. */
void sfs_inode_maps_follow_writers(struct sfs_inode *in);

/* Refreshes ksize/size from the kernel's size (fstat under the lock) when
 * nothing is staged: a call this process passed to the kernel may have
 * changed it. Caller holds the inode lock. */
void sfs_inode_resync_locked(struct sfs_inode *in);

/* The application's descriptors of the inode (fd numbers whose file refers
 * to it), at most max into out; returns how many there are. */
int sfs_inode_app_fds(struct sfs_inode *in, int *out, int max);

/* The kernel changed the file in a way only its fsync makes durable. */
static inline void sfs_inode_kernel_changed(struct sfs_inode *in)
{
	if (!atomic_load(&in->kdirty)) /* no store to a shared line per write */
		atomic_store(&in->kdirty, true);
}

/* The lock, the barrier and the read sections (inolock.c). */
#include "inolock.h"

#endif
