/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "init.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs/fdtable.h"
#include "fs/flush.h"
#include "fs/lease.h"
#include "fs/logged.h"
#include "fs/process.h"
#include "fs/share.h"
#include "interpose/stdio_out.h"
#include "oplog/oplog.h"
#include "oplog/libsys.h"
#include "oplog/recover.h"
#include "sys/real.h"
#include "sys/self.h"
#include "map/protect.h"
#include "staging/adopt.h"
#include "staging/census.h"
#include "staging/pool.h"
#include "util/compiler.h"
#include "util/decname.h"
#include "util/dirscan.h"
#include "util/guard.h"
#include "util/signals.h"
#include "util/stackclear.h"
#include "util/msg.h"
#include "util/names.h"
#include "util/pmem.h"
#include "util/stats.h"

SFS_HOT atomic_int sfs_init_state;
static __thread int in_init __attribute__((tls_model("initial-exec")));

/* Whether the start's descriptor of .splitfs stays open for the run:
 * in sync and strict modes, so that a directory put in its place later
 * (sfs_privdir: ESTALE) cannot keep a writer from its log. Not under a
 * RLIMIT_NOFILE so low at the start that the library's numbers are ones
 * the program reaches (its floor under 512): there a descriptor kept for
 * good is one of the program's few, which none of its calls could give
 * back (coreutils' sort-continue: under `ulimit -n 6` sort opens inputs
 * until EMFILE, needs two, and failed with one). */
static bool keeps_start_dirfd(void)
{
	return sfs_g.opt.mode != SFS_MODE_POSIX && sfs_g.fd_floor >= 512;
}

/* Sets up <root>/.splitfs and the managed device. Returns 0 or -errno. */
static int setup_root(void)
{
	const char *root = sfs_g.opt.root;
	struct stat st;
	if (SFS_REAL(stat)(root, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	sfs_g.root_dev = st.st_dev;
	/* Not snprintf: its first call in a process costs 5 us (its code's
	 * pages), and a start needs no other. */
	if (sfs_name_cat(sfs_g.priv_dir, sizeof(sfs_g.priv_dir), root, "/.splitfs") >=
	    sizeof(sfs_g.priv_dir))
		return -ENAMETOOLONG;
	/* Shared by every process and user of the file system, like /tmp.
	 * Made by the first process only: a mkdir of an existing directory
	 * takes the parent's lock, at every process start. */
	int dfd = SFS_REAL(open)(sfs_g.priv_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 && errno == ENOENT) {
		if (SFS_REAL(mkdir)(sfs_g.priv_dir, 01777) != 0 && errno != EEXIST)
			return -errno;
		dfd = SFS_REAL(open)(sfs_g.priv_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (dfd < 0)
		return -errno;
	/* One statx for what the start needs of it: its device, its identity
	 * (inode, birth time: the census's name), and which mount this is
	 * (staged windows are adopted only on the one they were written on,
	 * staging/format.h). */
	struct statx stx;
	if (SFS_REAL(statx)(dfd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME | SFS_STATX_MOUNT,
			    &stx) != 0 ||
	    makedev(stx.stx_dev_major, stx.stx_dev_minor) != sfs_g.root_dev) {
		SFS_REAL(close)(dfd);
		return -EXDEV; /* relink needs staging files on the same file system */
	}
	/* In POSIX mode the start works with this descriptor and closes it
	 * (start_root); a later use opens an internal one, of this same
	 * directory (sfs_privdir). Sync and strict modes keep it, as a
	 * writer needs its log there even after .splitfs was swapped for
	 * another directory, but only where it costs the program nothing
	 * (keeps_start_dirfd). */
	sfs_g.priv_ino = (ino_t)stx.stx_ino;
	sfs_g.priv_btime_ns = sfs_census_btime_ns(&stx);
	sfs_g.mnt_id = stx.stx_mnt_id;
	sfs_g.priv_dirfd = keeps_start_dirfd() ? sfs_internal_fd(dfd) : dfd;
	return sfs_boot_id(sfs_lib_sys(), sfs_g.boot_id);
}

/* Puts back what dead processes left: the staging windows of this user's
 * processes that died on this mount (staging/adopt.h), and the operation
 * logs of dead processes (any mode may find them: the file system is
 * shared). */
static void recover_dead(void)
{
	struct sfs_recovery rep;
	memset(&rep, 0, sizeof(rep));
	/* One read of the directory: stores adopted as it goes, logs after
	 * (their replay renames them). Its descriptor (not O_PATH) serves
	 * open_by_handle_at too. */
	struct sfs_recovery logs;
	struct sfs_names lognames = {0};
	int scan = SFS_REAL(openat)(sfs_g.priv_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct sfs_recover_env env;
	sfs_adopt_env_lib(&env, scan);
	/* getdents64 into the stack, not opendir: at every process start,
	 * no 32 KiB buffer to allocate and no fcntl calls. */
	struct sfs_dirscan names;
	sfs_dirscan_start(&names, scan, sfs_kernel_getdents64);
	const struct dirent64 *de;
	while ((de = sfs_dirscan_next(&names)) != NULL)
		if (sfs_recover_is_log(de->d_name))
			sfs_names_add(&lognames, de->d_name);
		else
			sfs_adopt_entry(&env, sfs_g.priv_dirfd, de->d_name, &rep);
	sfs_recover_names(&env, scan, lognames.v, lognames.n, &logs);
	sfs_names_free(&lognames);
	if (scan >= 0)
		SFS_REAL(close)(scan);
	if (logs.logs) {
		sfs_stat_event(SFS_EV_recovered_logs, logs.logs);
		sfs_stat_event(SFS_EV_recovered_records, logs.records);
	}
	if (rep.stores)
		sfs_stat_event(SFS_EV_adopted_stores, rep.stores);
	if (logs.records || logs.skipped || logs.first_error[0])
		sfs_msg("recovered %u records (%llu bytes, %u files) from %u logs of dead processes in "
			"%.1f ms, %u skipped%s%s",
			logs.records, (unsigned long long)logs.bytes, logs.files, logs.logs,
			(double)logs.ns / 1e6, logs.skipped, logs.first_error[0] ? "; " : "",
			logs.first_error);
	if (rep.orphaned || rep.first_error[0])
		sfs_warn("staged appends of dead processes: %u put back, %u kept apart (%s)",
			 rep.stores, rep.orphaned, rep.first_error);
}

/* The start's own descriptor of .splitfs goes (setup_root). */
static void drop_start_dirfd(void)
{
	if (keeps_start_dirfd())
		return;
	int fd = __atomic_exchange_n(&sfs_g.priv_dirfd, -1, __ATOMIC_ACQ_REL);
	if (fd >= 0)
		SFS_REAL(close)(fd);
}

/* The start on the managed file system: its private directory, what dead
 * processes left there, the shared segments, the library's handlers.
 * Returns with sfs_g.active set, or with the library off (after saying
 * why). */
static void start_root(void)
{
	/* What only a started library reads, put off with the start: a
	 * process that never starts (/bin/true, a pipeline's filter) makes
	 * none of these calls. */
	struct rlimit rl;
	long soft = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (long)rl.rlim_cur : 1024;
	sfs_g.fd_floor = (int)SFS_MIN(soft / 2, 512);
	sfs_g.map_shift = (unsigned)__builtin_ctzll(sfs_g.opt.map_size);
	sfs_refresh_fsize_limit();
	sfs_g.euid = geteuid();
	sfs_stats_open_output();
	int rc = setup_root();
	if (rc) {
		drop_start_dirfd();
		sfs_error("SPLITFS_ROOT=%s: %s; passing every call to the kernel", sfs_g.opt.root,
			  strerror(-rc));
		return;
	}
	sfs_census_attach();
	recover_dead();
	sfs_census_settle();
	drop_start_dirfd();
	sfs_share_attach();
	sfs_protect_init();
	sfs_guard_install();
	sfs_signals_install(sfs_flush_before_exit);
	pthread_atfork(sfs_atfork_prepare, sfs_atfork_parent, sfs_atfork_child);
	sfs_demote_inherited();
	if (sfs_g.opt.verbose) {
		sfs_options_print(&sfs_g.opt);
		sfs_msg("managing %s (dev %u:%u), relink backend %s", sfs_g.opt.root,
			major(sfs_g.root_dev), minor(sfs_g.root_dev),
			sfs_relink_name(sfs_g.opt.relink));
	}
	/* Release: a thread that sees it set sees all of the above. */
	__atomic_store_n(&sfs_g.active, true, __ATOMIC_RELEASE);
}

/* The start on the root, put off (POSIX mode) until a call names a path:
 * a process that never does (a filter of a pipeline, /bin/true, a helper
 * that only reads what it inherited) never pays for it. Until then nothing
 * is managed: every descriptor it holds is one it inherited, the kernel's
 * in POSIX mode. What dead processes left is put back, as before, before
 * the first call that could see it (open, stat, rename, ... of any path).
 * SFS_WAKE_OFF: a fork child of a process another thread of which was
 * starting (the start's state is half made): the library stays off. */
SFS_HOT atomic_int sfs_wake_state;
static __thread int in_wake __attribute__((tls_model("initial-exec")));

static void wake_child(void)
{
	if (atomic_load(&sfs_wake_state) == SFS_WAKE_RUNNING)
		atomic_store(&sfs_wake_state, SFS_WAKE_OFF);
}

bool sfs_dormant(void)
{
	int st = atomic_load_explicit(&sfs_wake_state, memory_order_acquire);
	return st == SFS_WAKE_DORMANT || st == SFS_WAKE_RUNNING;
}

void sfs_wake_slow(void)
{
	/* A vfork child runs on its parent's memory (sys/global.h), and a
	 * start re-entered from itself (a handler) waits for nothing. */
	if (sfs_vfork_child || in_wake)
		return;
	int expect = SFS_WAKE_DORMANT;
	if (atomic_compare_exchange_strong(&sfs_wake_state, &expect, SFS_WAKE_RUNNING)) {
		in_wake = 1;
		start_root();
		sfs_clear_stack_below(); /* what the start left below the program's call */
		in_wake = 0;
		atomic_store_explicit(&sfs_wake_state, SFS_WAKE_DONE, memory_order_release);
		return;
	}
	while (atomic_load_explicit(&sfs_wake_state, memory_order_acquire) == SFS_WAKE_RUNNING)
		sched_yield();
}

static void do_init(void)
{
	char err[PATH_MAX + 128];
	if (sfs_options_load(&sfs_g.opt, err, sizeof(err)) != 0) {
		sfs_error("%s; passing every call to the kernel", err);
		return;
	}
	if (!sfs_g.opt.root[0])
		return;
	/* Lower layers call up only through what start-up registers here,
	 * before the first internal fd (stats file, private directory). */
	sfs_internal_set_marker(sfs_fd_set_internal);
	sfs_staging_set_housekeeping(sfs_inode_evict_writable);
	sfs_oplog_set_ops(&sfs_fs_oplog_ops);
	sfs_stats_on = sfs_g.opt.stats;
	sfs_stats_note_stderr();
	/* Sync and strict modes start at once when the process inherits a
	 * descriptor on the root's file system, whose writes are made durable
	 * per call from the start (sfs_demote_inherited); without one, their
	 * start waits for a call that names a path, as POSIX mode's does. */
	if (sfs_g.opt.mode == SFS_MODE_POSIX || !sfs_holds_root_descriptor(sfs_g.opt.root)) {
		pthread_atfork(NULL, NULL, wake_child);
		atomic_store_explicit(&sfs_wake_state, SFS_WAKE_DORMANT, memory_order_release);
		return;
	}
	start_root();
	sfs_clear_stack_below(); /* what the start left below the constructor */
}

void sfs_init_slow(void)
{
	int expect = 0;
	if (atomic_compare_exchange_strong(&sfs_init_state, &expect, 1)) {
		in_init = 1;
		do_init();
		in_init = 0;
		/* A handler installed before the start (another library's
		 * constructor) may run the library's code: real functions are
		 * looked up at first use, which a handler must not do. */
		if (atomic_load_explicit(&sfs_real_handler_seen, memory_order_relaxed))
			sfs_real_resolve();
		atomic_store_explicit(&sfs_init_state, 2, memory_order_release);
		return;
	}
	if (in_init)
		return; /* re-entered from init itself: sfs_g.active is still false */
	while (atomic_load_explicit(&sfs_init_state, memory_order_acquire) != 2)
		sched_yield();
}

__attribute__((constructor)) static void splitfs_ctor(void)
{
	sfs_init();
}

__attribute__((destructor)) static void splitfs_dtor(void)
{
	if (!sfs_live()) {
		sfs_pmem_close(); /* the library may have run before it stopped */
		return;
	}
	sfs_stdio_exit(); /* before sfs_demote_fds forgets which files they are */
	/* What is still staged goes to the kernel, as a plain write would have;
	 * later writes (other destructors) go straight to the kernel. */
	sfs_flush_all();
	sfs_share_exit(); /* its stores end here: its sessions stop counting */
	sfs_demote_fds(false);
	sfs_lease_drop_all();  /* cached inodes */
	sfs_oplog_close(true); /* unmaps the log, with libpmem2 */
	/* Before libpmem2's destructor (util/pmem.h): the staging thread may
	 * be learning the primitives. */
	sfs_pmem_close();
	sfs_staging_shutdown();
	sfs_stage_unpark_all();
	sfs_print_stats("exit");
}

SFS_EXPORT const char *splitfs_version(void);
const char *splitfs_version(void)
{
	return SFS_VERSION;
}
