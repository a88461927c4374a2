/* SPDX-License-Identifier: Apache-2.0 */
/* Recovery: replaying the operation logs of processes that died, used by
 * `splitfs recover` and by the library when it starts.
 *
 * A live process holds an flock on its log, so a log that can be locked
 * belongs to a dead process. Which records go back depends on how it died
 * (format.h): on the same mount (the process died, the machine did not)
 * every write that returned is in the page cache already, and only the
 * strict-mode writes that were in flight are replayed, so that a killed
 * write is whole; after a crash, its valid records of the current
 * generation are replayed in order, skipping each file's records up to its
 * last COMMIT: WRITE is a pwrite at its offset, TRUNCATE an ftruncate, both
 * idempotent, so a recovery interrupted by another crash simply runs again.
 * Every file the log names is fsynced, then the log's generation is bumped
 * and the log is kept for reuse ("log.free.*").
 *
 * Trust: a log is used only if it is a regular, private file of the
 * caller's user (root's `splitfs recover` takes everyone's), not sparse,
 * one link; a file it
 * names must be on the managed file system, the very inode and generation
 * bound (by file handle, needs CAP_DAC_READ_SEARCH, or by the logged path),
 * and owned by the log's user (or the log is root's). */
#ifndef SFS_OPLOG_RECOVER_H
#define SFS_OPLOG_RECOVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <dirent.h>
#include <sys/uio.h>

/* The system calls recovery makes: libc's in the CLI, the library's real
 * functions inside the preloaded library (which must not call its own
 * interposed names). X(return type, name, parameters), one row each: the
 * struct and both tables that fill it (oplog/libsys.c, cli/libc_sys.c) are
 * made from this list, so none of them can miss a call. */
#define SFS_SYS_CALLS(X)                                                                           \
	X(int, open, (const char *, int, ...))                                                     \
	X(int, openat, (int, const char *, int, ...))                                              \
	X(ssize_t, pread, (int, void *, size_t, off_t))                                            \
	X(ssize_t, pwrite, (int, const void *, size_t, off_t))                                     \
	X(int, ftruncate, (int, off_t))                                                            \
	X(int, fsync, (int))                                                                       \
	X(int, close, (int))                                                                       \
	X(int, renameat, (int, const char *, int, const char *))                                   \
	X(int, ioctl, (int, unsigned long, ...))                                                   \
	X(int, fstat, (int, struct stat *))                                                        \
	X(void *, mmap, (void *, size_t, int, int, int, off_t))                                    \
	X(int, unlinkat, (int, const char *, int))                                                 \
	X(int, flock, (int, int))                                                                  \
	X(int, fallocate, (int, int, off_t, off_t))                                                \
	X(int, statx, (int, const char *, int, unsigned int, struct statx *))                      \
	X(int, fstatat, (int, const char *, struct stat *, int))                                   \
	X(ssize_t, getdents64, (int, void *, size_t))                                              \
	X(int, futimens, (int, const struct timespec *))

struct sfs_sys {
#define SFS_SYS_FIELD(ret, name, params) ret(*name) params;
	SFS_SYS_CALLS(SFS_SYS_FIELD)
#undef SFS_SYS_FIELD
};

/* Who recovers, on which mount. */
struct sfs_recover_env {
	const struct sfs_sys *sys;
	uint8_t boot_id[16]; /* this boot */
	uint64_t mnt_id;     /* this mount of the managed file system */
	uid_t euid;	     /* whose logs and stores */
	bool all_users;	     /* root's `splitfs recover`: every user's logs and
				stores, each into that user's files */
	dev_t root_dev;	     /* the managed file system */
	int root_fd;	     /* a directory on it, O_RDONLY (file handles), or -1 */
	/* The library's: a store of euid's, counted in the census of that id,
	 * lost its bound name (staging/census.h); NULL elsewhere. */
	void (*census_leave)(uint64_t id);
};

/* Fills boot_id: this boot. 0 or -errno. */
int sfs_boot_id(const struct sfs_sys *sys, uint8_t boot_id[16]);

/* The statx mask that gives the mount of a file (stx_mnt_id): the unique
 * id (Linux 6.8) is never reused; the old one may be after an unmount,
 * but not while the file system stays mounted. */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#define SFS_STATX_MOUNT (STATX_MNT_ID_UNIQUE | STATX_MNT_ID)

/* Fills boot_id and mnt_id: this boot, and the mount of the file system
 * that holds dirfd. 0 or -errno. */
int sfs_mount_instance(const struct sfs_sys *sys, int dirfd, uint8_t boot_id[16], uint64_t *mnt_id);

struct sfs_recovery {
	unsigned logs;	      /* logs of dead processes replayed */
	unsigned records;     /* records applied */
	unsigned skipped;     /* records not applied: torn or corrupt, their file gone */
	unsigned stores;      /* staging stores of dead processes adopted */
	uint64_t store_bytes; /* bytes they put into their files */
	unsigned discarded;   /* stores of another mount (a crash) or a truncated file */
	unsigned orphaned;    /* stores whose file changed since: kept as orphan.* */
	uint64_t bytes;	      /* data bytes written back */
	unsigned files;	      /* files written */
	uint64_t ns;	      /* time taken */
	char first_error[256];
};

/* A log whose records are dead becomes free for reuse (renamed to freed),
 * unless its user keeps enough free logs already (then it goes): logs of
 * sizes nobody asks for must not pile up. dirfd: an O_RDONLY directory. */
#define SFS_FREE_LOGS_KEPT 4
void sfs_log_retire(const struct sfs_sys *sys, int dirfd, const char *name, const char *freed,
		    uid_t uid);

/* Replays every dead process's log in priv_dir (<root>/.splitfs) the
 * caller may. Returns 0 or -errno (the report says what was done either
 * way; rep->first_error the first thing that could not be). */
int sfs_recover_dir(const struct sfs_recover_env *env, const char *priv_dir,
		    struct sfs_recovery *rep);

/* Whether a name in .splitfs is an operation log's (not a free one). */
bool sfs_recover_is_log(const char *name);

/* The same for names read from dirfd (an O_RDONLY descriptor of
 * .splitfs) by a caller that reads it for more than logs; names not a
 * log's are skipped. */
void sfs_recover_names(const struct sfs_recover_env *env, int dirfd, char *const *names, size_t n,
		       struct sfs_recovery *rep);

#endif
