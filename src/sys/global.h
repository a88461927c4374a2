/* SPDX-License-Identifier: Apache-2.0 */
/* Process-wide state every layer reads: the options and the managed file
 * system. Set by start-up (init.c) before sfs_g.active turns true, and
 * read-only afterwards except where a field says otherwise. */
#ifndef SFS_SYS_GLOBAL_H
#define SFS_SYS_GLOBAL_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/options.h"

/* Scalars first, the paths last: a process that starts writes one page of
 * it (the scalars, the options' and root), one that wakes (init.c) one
 * more (priv_dir). Page-aligned, so that it is one page, not two. */
struct sfs_global {
	bool active;		/* a valid root was given: manage its files */
	dev_t root_dev;		/* st_dev of the managed file system */
	int priv_dirfd;		/* O_PATH of priv_dir (internal fd), -1 until used: sys/self.h */
	ino_t priv_ino;		/* priv_dir's inode, as the start checked it */
	uint64_t priv_btime_ns; /* and its birth time (0: none kept) */
	unsigned map_shift;	/* log2(opt.map_size) */
	_Atomic long max_vmas;	/* our mapping budget: vm.max_map_count / 4, 0 until read */
	int fd_floor;		/* internal fds are moved at or above this */
	int stats_fd;		/* SPLITFS_STATS_FILE (internal fd) or -1: stderr */
	_Atomic uint64_t fsize_limit; /* RLIMIT_FSIZE, refreshed by the setrlimit wrappers */
	dev_t stderr_dev;	      /* what fd 2 was at start, so the stats never go */
	ino_t stderr_ino;	      /* into a file the application put on fd 2 later */
	uid_t euid;		      /* the user whose files in .splitfs this process uses */
	atomic_bool fd_pressure;      /* the application met RLIMIT_NOFILE: no new files managed */
	uint8_t boot_id[16];	      /* this boot and this mount of the managed file */
	uint64_t mnt_id;	      /* system (staging/adopt.h) */
	struct sfs_options opt;
	char priv_dir[PATH_MAX]; /* <root>/.splitfs: staging files, logs */
};

extern struct sfs_global sfs_g;

/* Set on the thread that calls vfork, from just before the call until the
 * parent thread runs again (interpose/vfork.c). The child runs on that
 * thread's stack and TLS in the parent's memory, so it is the only one to
 * see it set: every table the library could edit there is the parent's.
 * Initial-exec TLS: read on every call. */
extern __thread bool sfs_vfork_child __attribute__((tls_model("initial-exec")));

/* Whether the library manages files in this process now: started with a
 * valid root, and not a vfork child (which leaves every call to the kernel
 * until its exec or _exit). */
static inline bool sfs_live(void)
{
	return __atomic_load_n(&sfs_g.active, __ATOMIC_ACQUIRE) && !sfs_vfork_child;
}

/* Re-reads RLIMIT_FSIZE (after the application changed it). */
void sfs_refresh_fsize_limit(void);

#endif
