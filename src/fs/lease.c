/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "lease.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../sys/real.h"
#include "../oplog/oplog.h"
#include "../sys/statq.h"
#include "../util/clock.h"
#include "../util/compiler.h"
#include "../util/msg.h"
#include "../util/stats.h"
#include "../util/threads.h"
#include "flush.h"
#include "logged.h"
#include "logsync.h"
#include "../util/signals.h"
#include "ahead.h"
#include "data.h"
#include "sharewrite.h"
#include "openfile.h"

/* Data operations on a file that is not leased before the library asks
 * for a lease. A lease and what comes with it cost about twenty system
 * calls (a write-only file made readable, the lease, binding a staging
 * store, the relink at close, giving the lease back): a file written or
 * read a few times and closed is cheaper left to the kernel. tar -x of
 * 3000 files of 0-64 KiB (10 KiB writes): 1.9x the kernel's time with 4,
 * 1.1x with 16; a file used thousands of times does not notice. */
#define LEASE_AFTER 16

/* After the kernel refused a lease (the file is open elsewhere), the next
 * try waits this long, doubling up to the maximum. */
#define RETRY_MIN_NS (1000 * 1000)
#define RETRY_MAX_NS (256 * 1000 * 1000)

SFS_HOT static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
SFS_HOT static _Atomic pid_t service_tid; /* 0: no service thread yet */
static_assert(sizeof(service_tid) == sizeof(int), "service_tid is a futex word");

/* The application's disposition of the signal, as it set it. */
static struct sigaction app_act;
SFS_HOT static pthread_mutex_t app_act_lock = PTHREAD_MUTEX_INITIALIZER;
/* Atomic: sigaction reads it in any thread, without the lock. */
static _Atomic bool handler_installed;

int sfs_lease_sig(void)
{
	return SIGRTMAX - 3;
}

/* Called by sigaction, which a sanitizer runtime calls while it
 * initialises (SFS_NO_SANITIZE). */
SFS_NO_SANITIZE bool sfs_lease_owns(int sig)
{
	return atomic_load_explicit(&handler_installed, memory_order_acquire) &&
	       sig == sfs_lease_sig();
}

/* --- breaks ------------------------------------------------------------------ */

/* The break of the lease on fd (or, fd < 0, of any lease: the signal was
 * forwarded without its siginfo). Runs on the service thread.
 * A break can come while the lease is still being taken: after
 * F_SETLEASE, before in->leased is set, by a thread that holds the inode
 * lock until then (lease_taking meanwhile). Such a break is handled once
 * that thread lets go of the lock. Were it skipped, the kernel would take
 * the lease back lease-break-time (45 s) later, unheard, while this
 * process went on staging and storing as the file's holder. */
static void drop_if_broken(struct sfs_inode *in, void *unused)
{
	(void)unused;
	/* lease_taking first: it is cleared after leased is set. */
	if (!atomic_load(&in->lease_taking) && !sfs_inode_leased(in))
		return;
	sfs_inode_lock(in);
	/* F_GETLEASE answers the type the lease is being broken to. */
	int want = in->kwritable ? F_WRLCK : F_RDLCK;
	if (sfs_inode_leased(in) && SFS_REAL(fcntl)(in->kfd, F_GETLEASE) != want) {
		sfs_lease_drop_locked(in);
		sfs_stat_event(SFS_EV_lease_breaks, 1);
	}
	sfs_inode_unlock(in);
}

static void on_break(int fd)
{
	struct sfs_inode *in = fd >= 0 ? sfs_inode_find_kfd(fd) : NULL;
	if (in) {
		drop_if_broken(in, NULL);
		sfs_inode_put(in);
		return;
	}
	sfs_inode_foreach(drop_if_broken, NULL);
}

static void *service(void *unused)
{
	(void)unused;
	sfs_thread_mine();
	atomic_store(&service_tid, (pid_t)SFS_REAL(syscall)(SYS_gettid));
	(void)SFS_REAL(syscall)(SYS_futex, &service_tid, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, INT_MAX,
				NULL, NULL, 0); /* start() waits for the number */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sfs_lease_sig());
	for (;;) {
		siginfo_t si;
		if (sigwaitinfo(&set, &si) < 0)
			continue;
		on_break(si.si_code == POLL_MSG ? si.si_fd : -1);
	}
	return NULL;
}

/* A lease break that reached an application thread (the moment between
 * taking a lease and aiming its signal at the service thread), or the
 * application's own use of the number. Async-signal-safe. */
static void handler(int sig, siginfo_t *info, void *ctx)
{
	if (info->si_code == POLL_MSG) {
		pid_t tid = atomic_load(&service_tid);
		if (tid)
			SFS_REAL(syscall)(SYS_tgkill, getpid(), tid, sig);
		return;
	}
	struct sigaction a = app_act;
	if (a.sa_handler == SIG_IGN)
		return;
	if (a.sa_handler == SIG_DFL) {
		/* The default action of a real-time signal ends the process. */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		SFS_REAL(sigaction)(sig, &dfl, NULL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
		SFS_REAL(syscall)(SYS_tgkill, getpid(), (pid_t)SFS_REAL(syscall)(SYS_gettid), sig);
		return;
	}
	sfs_signals_run_app(sig, &a, &app_act, info, ctx); /* its mask, not this action's */
}

/* Starts the service thread and installs the forwarding handler, once. */
static bool start(void)
{
	if (atomic_load_explicit(&service_tid, memory_order_acquire))
		return true;
	sfs_mutex_lock(&start_lock);
	if (!handler_installed) {
		sfs_real_resolve(); /* the handler looks nothing up (sys/real.h) */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sfs_mutex_lock(&app_act_lock);
		handler_installed = SFS_REAL(sigaction)(sfs_lease_sig(), &sa, &app_act) == 0;
		sfs_mutex_unlock(&app_act_lock);
	}
	if (handler_installed && !atomic_load(&service_tid) &&
	    sfs_thread_create(service, NULL) == 0) {
		/* Asleep until the thread has said its number (a spin would
		 * take the core the new thread needs, on a small machine). */
		while (!atomic_load(&service_tid))
			(void)SFS_REAL(syscall)(SYS_futex, &service_tid,
						FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0);
	}
	sfs_mutex_unlock(&start_lock);
	return atomic_load(&service_tid) != 0;
}

/* --- taking and dropping ----------------------------------------------------- */

void sfs_lease_due(struct sfs_inode *in)
{
	sfs_inode_lock(in);
	if (in->lease_ops < LEASE_AFTER - 1)
		in->lease_ops = LEASE_AFTER - 1;
	sfs_inode_unlock(in);
}

/* No lease now, the file being open elsewhere: the next try after a
 * backoff that doubles each time, up to RETRY_MAX_NS. */
static void back_off(struct sfs_inode *in, int64_t now)
{
	in->lease_backoff = in->lease_backoff ?
				    SFS_MIN(2 * in->lease_backoff, (int64_t)RETRY_MAX_NS) :
				    RETRY_MIN_NS;
	in->lease_retry_at = now + in->lease_backoff;
}

bool sfs_lease_take_locked(struct sfs_inode *in, bool force)
{
	if (sfs_inode_leased(in))
		return true;
	if (in->lease_never || in->kfd < 0)
		return false;
	if (!force && ++in->lease_ops < LEASE_AFTER)
		return false;
	int64_t now = sfs_coarse_ns();
	if (now < in->lease_retry_at)
		return false;
	if (!start())
		return false;
	if (in->widen && !sfs_openfile_widen(in))
		return false; /* a write-only open the library cannot read */
	if (in->apart && !sfs_openfile_merge(in)) {
		/* The kernel would refuse it (two open files): a merge scans
		 * every descriptor, so not again at the next operation. */
		back_off(in, now);
		return false;
	}
	int sig = sfs_lease_sig();
	int type = in->kwritable ? F_WRLCK : F_RDLCK;
	/* The signal first (releasing a lease forgets it), the lease, then
	 * the signal aimed at the service thread (taking a lease aims it at
	 * the process). */
	int rc = SFS_REAL(fcntl)(in->kfd, F_SETSIG, sig);
	atomic_store(&in->lease_taking, true); /* seq_cst: before the lease */
	if (rc == 0)
		rc = SFS_REAL(fcntl)(in->kfd, F_SETLEASE, type);
	/* Refused because an inode object of this file that left the table is
	 * still closing its descriptor (the background eviction of a closed
	 * file, racing this open of it): once more when it is done. */
	if (rc != 0 && errno == EAGAIN && sfs_inode_wait_destroyed())
		rc = SFS_REAL(fcntl)(in->kfd, F_SETLEASE, type);
	if (rc != 0) {
		if (errno == EAGAIN || errno == EBUSY || errno == EWOULDBLOCK) {
			/* Open elsewhere now: later, less often each time. Perhaps
			 * in this process: a reader's open that another thread
			 * was installing while the merge looked keeps its own
			 * open file, which the next try merges (without this,
			 * FxMark DRBM with 2 threads kept its shared file
			 * unleased in 4 runs of 5). */
			in->apart = true;
			back_off(in, now);
			sfs_stat_event(SFS_EV_lease_refused, 1);
		} else {
			/* Not the owner (EACCES), no leases here (EINVAL): never. */
			in->lease_never = true;
			sfs_stat_event(SFS_EV_lease_refused, 1);
		}
		atomic_store(&in->lease_taking, false);
		return false;
	}
	struct f_owner_ex owner = {F_OWNER_TID, atomic_load(&service_tid)};
	SFS_REAL(fcntl)(in->kfd, F_SETOWN_EX, &owner);
	in->lease_backoff = 0;
	in->lease_ops = 0;
	/* The file may have changed while others had it: the kernel's size is
	 * the truth now, and the kernel holds changes only its fsync makes
	 * durable. Nothing is staged while a file is not leased. */
	struct stat st;
	if (sfs_fstat_quiet(in->kfd, &st) == 0) {
		atomic_store(&in->ksize, st.st_size);
		atomic_store(&in->size, st.st_size);
	}
	sfs_inode_kernel_changed(in);
	atomic_store(&in->wr_next, -1);
	sfs_write_ahead_reset(in);
	atomic_store_explicit(&in->leased, true, memory_order_release);
	atomic_store(&in->lease_taking, false);
	/* Nobody else has the file open now: no store to order with others. */
	sfs_inode_share_end_locked(in);
	sfs_stat_event(SFS_EV_leases, 1);
	return true;
}

bool sfs_lease_try(struct sfs_inode *in, bool force)
{
	if (in->lease_never)
		return false;
	/* Refused a moment ago (the file is open elsewhere): no try before
	 * the backoff ends, and no lock taken to learn it. Every read of a
	 * file another process holds open asks (the lock, its release and
	 * the count were 200 of such a read's 805 instructions). */
	if (!force &&
	    sfs_coarse_ns() < atomic_load_explicit(&in->lease_retry_at, memory_order_relaxed))
		return false;
	if (!sfs_inode_trylock(in))
		return false; /* a writer is busy: the next operation tries */
	bool ok = sfs_lease_take_locked(in, force);
	sfs_inode_unlock(in);
	return ok;
}

int sfs_lease_drop_locked(struct sfs_inode *in)
{
	if (!sfs_inode_leased(in))
		return 0;
	sfs_logsync_off_locked(in);
	int rc = sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE);
	if (rc && atomic_load(&in->staged)) {
		/* The window cannot go in (its file changed behind the lease,
		 * relink.c): it stays bound, for recovery, and leaves the inode. */
		sfs_barrier_close(in);
		atomic_store(&in->staged, false);
		sfs_inode_staged_changed(-1);
		sfs_stage_abandon(&in->stage);
		sfs_barrier_open(in);
	}
	/* Sync and strict: the file durable and its records dead, so that no
	 * replay writes them over what the next user of the file writes. */
	if (in->log.logged) {
		int c = sfs_inode_log_commit(in);
		if (!rc)
			rc = c;
	}
	sfs_inode_unreserve_locked(in);
	sfs_stage_detach(&in->stage); /* unbound: the next holder binds its own */
	/* Readers of the mappings are out before the kernel lets another user
	 * in: they read what was there before anything else could change. */
	sfs_barrier_close(in);
	atomic_store_explicit(&in->leased, false, memory_order_release);
	sfs_barrier_open(in);
	SFS_REAL(fcntl)(in->kfd, F_SETLEASE, F_UNLCK);
	in->lease_ops = 0;
	return rc;
}

static void drop_one(struct sfs_inode *in, void *unused)
{
	(void)unused;
	if (!sfs_inode_leased(in))
		return;
	sfs_inode_lock(in);
	sfs_lease_drop_locked(in);
	sfs_inode_unlock(in);
}

void sfs_lease_drop_all(void)
{
	sfs_inode_foreach(drop_one, NULL);
}

int sfs_lease_app_action(const struct sigaction *act, struct sigaction *old)
{
	sfs_mutex_lock(&app_act_lock);
	if (old)
		*old = app_act;
	if (act) {
		app_act = *act;
		sigdelset(&app_act.sa_mask, SIGKILL);
		sigdelset(&app_act.sa_mask, SIGSTOP);
	}
	sfs_mutex_unlock(&app_act_lock);
	return 0;
}

void sfs_lease_reset_child(void)
{
	sfs_mutex_reset_child(&start_lock);
	sfs_mutex_reset_child(&app_act_lock);
	SFS_SET(service_tid, 0);
}
