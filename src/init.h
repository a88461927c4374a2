/* SPDX-License-Identifier: Apache-2.0 */
/* Process-wide state: options, the managed file system, start-up and exit. */
#ifndef SFS_INIT_H
#define SFS_INIT_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/options.h"

struct sfs_global {
	struct sfs_options opt;
	bool active;		/* a valid root was given: manage its files */
	dev_t root_dev;		/* st_dev of the managed file system */
	char priv_dir[PATH_MAX]; /* <root>/.splitfs: staging files, logs */
	int priv_dirfd;		/* O_PATH|O_DIRECTORY of priv_dir (internal fd) */
	unsigned map_shift;	/* log2(opt.map_size) */
	long max_vmas;		/* our mapping budget: vm.max_map_count / 4 */
	int fd_floor;		/* internal fds are moved at or above this */
	int stats_fd;		/* SPLITFS_STATS_FILE (internal fd) or -1: stderr */
	_Atomic uint64_t fsize_limit; /* RLIMIT_FSIZE, refreshed by the setrlimit wrappers */
	dev_t stderr_dev;	/* what fd 2 was at start, so the stats never go */
	ino_t stderr_ino;	/* into a file the application put on fd 2 later */
	uid_t euid;		/* the user whose files in .splitfs this process uses */
	atomic_bool fd_pressure; /* the application met RLIMIT_NOFILE: no new files managed */
	uint8_t boot_id[16];	/* this boot and this mount of the managed file */
	uint64_t mnt_id;	/* system (staging/adopt.h) */
};

extern struct sfs_global sfs_g;

/* 0: not started, 1: running, 2: done. Wrappers call sfs_init() first; it
 * returns at once after the first call. While init runs on this thread, the
 * library is inactive and every wrapper passes straight through. */
extern atomic_int sfs_init_state;
void sfs_init_slow(void);

static inline void sfs_init(void)
{
	if (__builtin_expect(atomic_load_explicit(&sfs_init_state, memory_order_acquire) != 2, 0))
		sfs_init_slow();
}

/* Whether init has finished, without starting it: for wrappers a memory
 * allocator calls while holding its own locks (mmap, syscall), where init,
 * which allocates, would deadlock. Before init no descriptor is managed. */
static inline bool sfs_initialized(void)
{
	return atomic_load_explicit(&sfs_init_state, memory_order_acquire) == 2;
}

/* True when the library manages files at all (after init). */
static inline bool sfs_active(void)
{
	sfs_init();
	return sfs_g.active;
}

struct sfs_sys;
/* The real system calls recovery and adoption make in the library. */
const struct sfs_sys *sfs_lib_sys(void);

/* Re-reads RLIMIT_FSIZE (after the application changed it). */
void sfs_refresh_fsize_limit(void);

/* Prints the stats table (SPLITFS_STATS) where SPLITFS_STATS_FILE says, or
 * to stderr if fd 2 is still what it was at start. */
void sfs_print_stats(const char *reason);

/* getpid() without a system call (glibc does not cache it); refreshed in a
 * forked child. */
int sfs_self_pid(void);
void sfs_self_pid_reset(void);

/* Moves an internal fd to a high number with O_CLOEXEC and marks it internal
 * in the fd table, so the application can neither see nor close it. Returns
 * the new fd (the old one is closed) or the old one if moving failed. */
int sfs_internal_fd(int fd);
void sfs_internal_close(int fd);

#endif
