/* SPDX-License-Identifier: Apache-2.0 */
/* Recovery: replaying the operation logs of processes that died, used by
 * `splitfs recover` and by the library when it starts.
 *
 * A live process holds an flock on its log, so a log that can be locked
 * belongs to a dead process. Its valid records of the current generation
 * (format.h) are replayed in order, skipping each file's records up to its
 * last COMMIT: WRITE is a pwrite at its offset, TRUNCATE an ftruncate, both
 * idempotent, so a recovery interrupted by another crash simply runs again.
 * Files are found by file handle (needs CAP_DAC_READ_SEARCH) or else by the
 * logged path, checked against the logged inode number and generation.
 * Every replayed file is fsynced, then the log's generation is bumped and
 * the log is kept for reuse ("log.free.*"). */
#ifndef SFS_OPLOG_RECOVER_H
#define SFS_OPLOG_RECOVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The system calls recovery makes: libc's in the CLI, the library's real
 * functions inside the preloaded library (which must not call its own
 * interposed names). */
struct sfs_sys {
	int (*open)(const char *, int, ...);
	int (*openat)(int, const char *, int, ...);
	ssize_t (*pread)(int, void *, size_t, off_t);
	ssize_t (*pwrite)(int, const void *, size_t, off_t);
	int (*ftruncate)(int, off_t);
	int (*fsync)(int);
	int (*close)(int);
	int (*renameat)(int, const char *, int, const char *);
	int (*ioctl)(int, unsigned long, ...);
	int (*fstat)(int, struct stat *);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*dup)(int);
};

struct sfs_recovery {
	unsigned logs;	      /* logs of dead processes replayed */
	unsigned records;     /* records applied */
	unsigned skipped;     /* records of files that could not be found */
	uint64_t bytes;	      /* data bytes written back */
	unsigned files;	      /* files written */
	uint64_t ns;	      /* time taken */
	char first_error[256];
};

/* Replays every dead process's log in priv_dir (<root>/.splitfs), whose
 * file system is mounted at root. Returns 0 or -errno (the report says
 * what was done either way). */
int sfs_recover_dir(const char *root, const char *priv_dir, const struct sfs_sys *sys,
		    struct sfs_recovery *rep);

#endif
