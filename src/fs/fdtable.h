/* SPDX-License-Identifier: Apache-2.0 */
/* fd -> open-file table. Lookups are lock-free (one load of the array, one of
 * the slot, one reference increment), and so are removals and a pending
 * descriptor's counts (one compare-and-swap); installs and marks take a
 * mutex. The array only grows; old arrays are kept (never freed) so a
 * lock-free caller holding one stays safe, and a grow forwards each old
 * slot to the new array. A slot holds NULL (not ours: pass through),
 * a struct sfs_file (a managed file), SFS_FD_INTERNAL (one of the
 * library's own descriptors, which the application must not touch),
 * SFS_FD_DSYNC (sync and strict modes: a descriptor of a file left to the
 * kernel, whose writes the wrappers make durable before returning), or a
 * pending mark: an open of a file this process had no inode of (read-only
 * in every mode; any open in POSIX mode), read and written through the
 * kernel for its first few reads and writes, so that a file read or
 * written once (tar, cp, grep) costs no more than the kernel's open, read
 * or write, and close; its next read or write manages it
 * (sfs_fd_pending_begin). Marks are small integers, never addresses. */
#ifndef SFS_FS_FDTABLE_H
#define SFS_FS_FDTABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sfs_file;

#define SFS_FD_INTERNAL ((struct sfs_file *)1)
#define SFS_FD_DSYNC ((struct sfs_file *)2)
/* Every value up to this is a mark, not a struct sfs_file. */
#define SFS_FD_MARK_MAX ((uintptr_t)4095)
/* Reads and writes of a pending descriptor through the kernel before it is
 * managed: as many as an inode serves through the kernel before its lease
 * (fs/lease.c), so that a file is managed only once it would be leased
 * soon (tar reads a 64 KiB file in 10 KiB records: 7 reads). */
#define SFS_FD_PENDING_OPS 16

/* Returns the managed file at fd with a reference taken, or NULL (also NULL
 * for internal fds). Release with sfs_file_put. */
struct sfs_file *sfs_fd_get(int fd);

bool sfs_fd_is_internal(int fd);

/* Installs f at fd, taking a new reference on f. */
int sfs_fd_install(int fd, struct sfs_file *f);

/* Removes fd; returns the file whose table reference the caller now owns,
 * or NULL (internal fds are not removed: use sfs_fd_set_internal). */
struct sfs_file *sfs_fd_remove(int fd);

void sfs_fd_set_internal(int fd, bool internal);

bool sfs_fd_is_dsync(int fd);

/* Marks (or unmarks) fd as SFS_FD_DSYNC; a managed entry is left alone. */
void sfs_fd_set_dsync(int fd, bool dsync);

/* Marks fd pending (the application's open of it just returned); dev and
 * ino: its file's. */
void sfs_fd_set_pending(int fd, dev_t dev, ino_t ino);

/* Marks fd pending without its file's identity: no inode of this process
 * can be of it (the open made the file, or the process has none), or none
 * would serve a read-only open better than the kernel (fileops.c). What it
 * is (its identity, type, file system) is learnt when needed: at its
 * promotion, which may then leave it to the kernel, or when another open
 * makes an inode (sfs_fd_pending_may_be, sfs_fd_pending_identify). A file
 * read or written in a few calls and closed never needs it: no fstat. */
void sfs_fd_set_pending_new(int fd);

/* Any pending descriptor in the process (a relaxed load: the fast path of
 * every read of a descriptor the library does not manage). */
bool sfs_fd_any_pending(void);

/* What fd's slot holds now (one load, no lock: the fast path of every
 * read and write of a descriptor the library does not manage, a pipe or a
 * socket). */
enum sfs_fd_kind {
	SFS_FD_KIND_KERNEL,  /* nothing, or a mark that is not pending */
	SFS_FD_KIND_PENDING, /* pending, or being promoted */
	SFS_FD_KIND_MANAGED, /* a managed file */
};
enum sfs_fd_kind sfs_fd_kind(int fd);

enum sfs_pending_step {
	SFS_PENDING_NO,	     /* not pending: the call goes on as for any other fd */
	SFS_PENDING_KERNEL,  /* made through the kernel, then sfs_fd_pending_end */
	SFS_PENDING_PROMOTE, /* this call manages it: then sfs_fd_promoted */
};

/* A read or write of fd begins. Counts it, unless this is the call that
 * manages the descriptor: no kernel call on it may be running then (it
 * would move the open file's offset, or its size, after the library took
 * them), and other callers wait. promote: this call manages it, whatever
 * its count (no kernel call may be made for it now: fs/share.h). */
enum sfs_pending_step sfs_fd_pending_begin(int fd, bool promote);

/* A SFS_PENDING_KERNEL call has returned. Preserves errno. */
void sfs_fd_pending_end(int fd);

/* Claims fd's promotion outside a read or write (none of it running):
 * true if it was pending; then as SFS_PENDING_PROMOTE. */
bool sfs_fd_pending_claim(int fd);

/* The application fsyncs (or fdatasyncs) pending fd: its inode, when it
 * has one, starts as a file the application syncs (fs/dax.h). */
void sfs_fd_pending_synced(int fd);

/* Whether pending fd (or being promoted) was synced while pending. */
bool sfs_fd_pending_was_synced(int fd);

/* The promotion is done (managed or not); the mark goes if it is still
 * there. */
void sfs_fd_promoted(int fd);

/* Whether the pending descriptor fd was marked with the file (dev, ino),
 * or with none yet (the caller confirms with an fstat: the number may have
 * been reused behind the library's back). */
bool sfs_fd_pending_may_be(int fd, dev_t dev, ino_t ino);

/* The file pending fd was marked with, if its identity is known. */
bool sfs_fd_pending_id(int fd, dev_t *dev, ino_t *ino);

/* Records what an fstat of pending fd showed, if it is still pending and
 * was marked without its file's identity. */
void sfs_fd_pending_identify(int fd, dev_t dev, ino_t ino);

/* fd's open file is shared now (a dup, a fork or exec, a descriptor
 * passed to another process, an mmap of it): if it is pending, it stays
 * the kernel's, never managed (a promotion would make a descriptor of the
 * library's on the same open file, and the kernel would lease it under the
 * others' feet). Waits for a promotion in progress to end. */
void sfs_fd_pending_forget(int fd);

/* The same for every pending descriptor (fork, exec). */
void sfs_fd_pending_forget_all(void);

/* The same for every pending descriptor without FD_CLOEXEC (a spawn: the
 * new program gets only those; one with FD_CLOEXEC is closed in the child
 * before anything can use it, and stays pending). */
void sfs_fd_pending_forget_inheritable(void);

/* Pending descriptors, for promote_pending_of (fileops.c): calls fn for
 * each pending fd until it returns false. */
void sfs_fd_foreach_pending(bool (*fn)(int fd, void *arg), void *arg);

/* Drops a mark that a number reused behind the library's back may carry
 * (dsync, pending); internal descriptors and managed files stay. */
void sfs_fd_forget_mark(int fd);

/* One past the highest fd that has ever had an entry. */
int sfs_fd_limit(void);

/* Forgets every entry without touching the files (a forked child); the
 * SFS_FD_DSYNC marks stay (the child inherited those descriptors), and with
 * dsync the managed descriptors become marked too. */
void sfs_fd_reset(bool dsync);

#endif
