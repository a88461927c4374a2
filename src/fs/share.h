/* SPDX-License-Identifier: Apache-2.0 */
/* Sharing a file's bytes between library processes (KucoFS's leases, MadFS's
 * shared per-file state): two processes that have one file open for writing
 * may both store into it through their own mappings (one page cache), so
 * that they do not take turns on the kernel's inode lock as pwrite(2)
 * would.
 *
 * What keeps read(2) and write(2) atomic with respect to each other (POSIX
 * 2.9.7) without a lease, among the user's library processes: a table of
 * block locks in the user's census segment (staging/census.h: /dev/shm,
 * mode 0600, checked before use). Every 4 KiB block of a file maps to one
 * bucket (a hash of the file, plus the block number); each bucket holds a
 * lock word and a sequence counter. Whoever writes bytes of a file that is
 * not leased (a store of a sharing session, or the kernel's pwrite) holds
 * the locks of its blocks' buckets and makes their counters odd meanwhile;
 * a read of such a file (the kernel's pread) is kept only if the counters of
 * its blocks did not move (versions.h, across processes).
 *
 * Pending descriptors (fdtable.h) read and write through the kernel without
 * knowing their file, so they cannot take the locks. A handshake keeps them
 * out of the way: each process counts its pending calls in flight in a slot
 * of its own in the segment, and a pending call checks the count of
 * sessions on its file's bucket of files (a hash of the file; first the
 * user's total, so that while no session runs anywhere a pending call
 * needs no look at which file it has) after it counted itself; a process
 * that begins a session raises those counts first and then waits until no
 * slot has a pending call in flight. So a pending call either runs with no
 * session on its file, or sees one and manages its descriptor first
 * (Dekker's handshake, seq_cst on both sides).
 *
 * Dead processes. A slot holds its process's pid, the time it was claimed
 * and a generation. A process is dead when its pid is gone or was started
 * after the claim (a reused pid); its slot is then reclaimed: its sessions
 * and calls in flight stop counting, and a lock it held can be taken (the
 * lock word names the slot and its generation). Nobody trusts a pid alone.
 *
 * What it does not order (README, "Other processes"): processes without
 * the library or of another user, and descriptors the library leaves to the
 * kernel for good (O_DIRECT, O_SYNC in POSIX mode, those inherited across
 * fork and exec, those received over a socket). Their reads and writes are
 * the kernel's, atomic against each other but not against a store. */
#ifndef SFS_FS_SHARE_H
#define SFS_FS_SHARE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* At start-up (after the census): the table, and this process's slot,
 * which also ends what a former program of this process (before an exec)
 * left counted there. Later uses attach on their own when this did not. */
void sfs_share_attach(void);

/* A pending call asks whether it may go to the kernel now. SFS_RAW_GO:
 * yes (no session anywhere), and the caller calls sfs_share_raw_end after
 * it; SFS_RAW_ASK: sessions run, so the caller learns which file it has
 * and asks sfs_share_raw_file (or calls sfs_share_raw_end to give up);
 * SFS_RAW_NO: unseen sessions may run (this process has no table while
 * others may): the caller manages the descriptor first (nothing to end). */
enum { SFS_RAW_NO, SFS_RAW_GO, SFS_RAW_ASK };
int sfs_share_raw_begin(void);
/* After SFS_RAW_ASK: true if no session runs on a file of the bucket of
 * (dev, ino): go, and end as above; false: manage the descriptor first
 * (the call is uncounted already). */
bool sfs_share_raw_file(dev_t dev, ino_t ino);
void sfs_share_raw_end(void);

/* A session: this process stores into the file (dev, ino), which it does
 * not lease. Begins only when no pending call of the user is in flight;
 * false: not now (one stayed in flight too long, or the process has no
 * slot or no segment). */
bool sfs_share_session_begin(dev_t dev, ino_t ino);
void sfs_share_session_end(dev_t dev, ino_t ino);

/* Sessions may store: false once the process exits (its sessions no
 * longer count, so nothing keeps pending calls away from its stores). */
bool sfs_share_storing(void);

/* The buckets of [off, off + n) of a file (dev, ino). */
struct sfs_share_span {
	unsigned first, count;
	uint64_t sum; /* read_begin: the counters' sum */
};

/* Locks the buckets of [off, off + n) (n > 0), their counters odd while
 * held. 0, or -ENOSYS: no table in this process (nothing to hold; others
 * may store unordered against this write: README). */
int sfs_share_lock(dev_t dev, ino_t ino, int64_t off, uint64_t n, struct sfs_share_span *sp);
void sfs_share_unlock(const struct sfs_share_span *sp);

/* A read of [off, off + n) of a file nobody leases: notes the counters.
 * 1: read, then sfs_share_read_valid; 0: a write of the range is running
 * (try again); -ENOSYS: no table (read without). */
int sfs_share_read_begin(dev_t dev, ino_t ino, int64_t off, uint64_t n, struct sfs_share_span *sp);
/* After the read: true if no write of the range ran since read_begin. */
bool sfs_share_read_valid(const struct sfs_share_span *sp);
/* A read that found the range's counters odd for long: waits for their
 * writers, taking over the lock of a dead one. */
void sfs_share_read_wait(const struct sfs_share_span *sp);

/* Process exit: its sessions end. A forked child: no slot yet, no session. */
void sfs_share_exit(void);
void sfs_share_reset_child(void);

#endif
