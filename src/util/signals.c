/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "signals.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "../sys/real.h"
#include "compiler.h"

__thread int sfs_busy __attribute__((tls_model("initial-exec")));
__thread int sfs_deferred __attribute__((tls_model("initial-exec")));

#define SA_EXPOSE_TAGBITS_ 0x00000800u /* <asm/signal-defs.h>, not in glibc's */
#define SA_RESTORER_ 0x04000000u       /* x86 */
#define NSIG_ 65

/* Signals deferred on this thread, in arrival order; one per signal, as the
 * kernel keeps a standard signal pending once. */
#define MAX_DEFERRED 8
struct deferred {
	int sig;
	siginfo_t info;
};
static __thread struct deferred queue[MAX_DEFERRED] __attribute__((tls_model("initial-exec")));

/* The application's actions, as it set them, for the signals the library
 * virtualises (owned[sig]). Written under lock, read by the handlers. */
static struct sigaction app[NSIG_];
SFS_HOT static bool owned[NSIG_];
SFS_HOT static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Atomic: sigaction reads it in any thread, without the lock. From the
 * library's start, the application's sigaction calls are the library's. */
SFS_HOT static _Atomic bool installed;
/* The dispositions the application never set were looked at, and those
 * that end the process given the flush (sfs_signals_arm). */
static _Atomic bool armed;

/* The signals whose default action ends the process and that nothing but
 * another process (or a timer, a pipe, a file-size limit) raises. */
static bool fatal_by_default(int sig)
{
	switch (sig) {
	case SIGHUP:
	case SIGINT:
	case SIGQUIT:
	case SIGABRT:
	case SIGUSR1:
	case SIGUSR2:
	case SIGPIPE:
	case SIGALRM:
	case SIGTERM:
	case SIGSTKFLT:
	case SIGXCPU:
	case SIGXFSZ:
	case SIGVTALRM:
	case SIGPROF:
	case SIGIO:
	case SIGPWR:
		return true;
	default:
		return false;
	}
}

/* Whether the library manages sig's disposition (not the guard's SIGSEGV
 * and SIGBUS, nor what cannot be caught). */
SFS_NO_SANITIZE static bool manageable(int sig)
{
	return sig > 0 && sig < NSIG_ && sig != SIGKILL && sig != SIGSTOP && sig != SIGSEGV &&
	       sig != SIGBUS && sig < SIGRTMIN;
}

static void raw_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	SFS_REAL(sigaction)(sig, act, old);
}

/* A fault the thread raised itself: it must run now. */
static bool synchronous(int sig, const siginfo_t *info)
{
	return (sig == SIGILL || sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS) &&
	       info->si_code > 0;
}

static void call_app(int sig, siginfo_t *info, void *uc)
{
	struct sigaction a = app[sig];
	if (a.sa_handler == SIG_IGN || a.sa_handler == SIG_DFL)
		return; /* changed meanwhile */
	if (a.sa_flags & SA_RESETHAND)
		app[sig].sa_handler = SIG_DFL; /* as the kernel: the flags stay */
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, info, uc);
	else
		a.sa_handler(sig);
}

static void trampoline(int sig, siginfo_t *info, void *uc)
{
	if (sfs_busy > 0 && !synchronous(sig, info)) {
		for (int i = 0; i < sfs_deferred; i++)
			if (queue[i].sig == sig)
				return; /* pending already: signals do not queue */
		if (sfs_deferred < MAX_DEFERRED) {
			queue[sfs_deferred].sig = sig;
			queue[sfs_deferred].info = *info;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			sfs_deferred++;
			return;
		}
	}
	call_app(sig, info, uc);
}

/* The deferred signals are raised again, at the thread, with their siginfo:
 * the kernel delivers each one as it would have, when the thread's mask
 * allows (not inside a handler that blocks it: a handler that runs here and
 * writes must not run its own signal's deferred copy inside itself), with
 * its own frame and the handler's mask. */
void sfs_run_deferred(void)
{
	if (sfs_busy > 0)
		return;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old); /* the queue is still */
	int saved = errno;
	pid_t pid = getpid(), tid = (pid_t)SFS_REAL(syscall)(SYS_gettid);
	for (int i = 0; i < sfs_deferred; i++) {
		siginfo_t info = queue[i].info;
		if (SFS_REAL(syscall)(SYS_rt_tgsigqueueinfo, pid, tid, queue[i].sig, &info) != 0)
			SFS_REAL(syscall)(SYS_tgkill, pid, tid, queue[i].sig);
	}
	sfs_deferred = 0;
	errno = saved;
	pthread_sigmask(SIG_SETMASK, &old, NULL); /* delivered here */
}

/* What the process staged, into its files (fs/flush.h:
 * sfs_flush_before_exit): set once by sfs_signals_install, before any
 * handler of the library is installed. */
SFS_HOT static void (*flush_before_exit)(void);

/* The default action of sig, which ends the process: staged appends go
 * into their files first (no waiting, no allocation: flush.h). */
static void fatal(int sig, siginfo_t *info, void *uc)
{
	(void)info;
	(void)uc;
	if (flush_before_exit)
		flush_before_exit();
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	raw_sigaction(sig, &dfl, NULL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	SFS_REAL(syscall)(SYS_tgkill, getpid(), (pid_t)SFS_REAL(syscall)(SYS_gettid), sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL); /* the default action now */
}

/* Installs for sig what the application's action asks for. Caller holds
 * lock. */
static void install(int sig)
{
	struct sigaction a = app[sig], real;
	memset(&real, 0, sizeof(real));
	if (a.sa_handler == SIG_IGN || (a.sa_handler == SIG_DFL && !fatal_by_default(sig))) {
		real = a;
	} else if (a.sa_handler == SIG_DFL) {
		real.sa_sigaction = fatal;
		real.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigfillset(&real.sa_mask);
	} else {
		real.sa_sigaction = trampoline;
		real.sa_flags = (a.sa_flags & ~SA_RESTORER_) | SA_SIGINFO;
		real.sa_mask = a.sa_mask;
	}
	raw_sigaction(sig, &real, NULL);
}

void sfs_signals_install(void (*before_exit)(void))
{
	flush_before_exit = before_exit;
	atomic_store_explicit(&installed, true, memory_order_release);
}

void sfs_signals_arm(void)
{
	if (atomic_load_explicit(&armed, memory_order_acquire))
		return;
	sfs_real_resolve(); /* the handlers below look nothing up (sys/real.h) */
	sfs_busy_enter();   /* a handler must not run into this lock */
	pthread_mutex_lock(&lock);
	for (int sig = 1; sig < NSIG_ && !armed; sig++) {
		if (!manageable(sig) || owned[sig])
			continue; /* the application's sigaction made it the library's */
		struct sigaction cur;
		if (SFS_REAL(sigaction)(sig, NULL, &cur) != 0)
			continue;
		/* Taken over only where it is needed: a handler (deferred), or
		 * a default action that ends the process (flushed first). */
		if (cur.sa_handler == SIG_IGN ||
		    (cur.sa_handler == SIG_DFL && !fatal_by_default(sig)))
			continue;
		app[sig] = cur;
		owned[sig] = true;
		install(sig);
	}
	atomic_store_explicit(&armed, true, memory_order_release);
	pthread_mutex_unlock(&lock);
	sfs_busy_exit();
}

/* Called by sigaction, which a sanitizer runtime calls while it
 * initialises (SFS_NO_SANITIZE). */
SFS_NO_SANITIZE bool sfs_signals_own(int sig)
{
	return atomic_load_explicit(&installed, memory_order_acquire) && manageable(sig);
}

int sfs_signals_action(int sig, const struct sigaction *act, struct sigaction *old)
{
	sfs_busy_enter(); /* a handler must not run into this lock */
	pthread_mutex_lock(&lock);
	struct sigaction cur;
	int rc = SFS_REAL(sigaction)(sig, NULL, &cur);
	if (rc == 0 && old) {
		/* What the application set, unless something changed it behind
		 * the library's back (glibc's sigset calls sigaction inside). */
		bool ours = owned[sig] && (cur.sa_flags & SA_SIGINFO) &&
			    (cur.sa_sigaction == trampoline || cur.sa_sigaction == fatal);
		/* The kernel's SA_RESETHAND made the trampoline SIG_DFL (its
		 * flags kept: SA_SIGINFO, which the application did not ask
		 * for) as call_app made the application's action SIG_DFL. */
		ours = ours ||
		       (owned[sig] && cur.sa_handler == SIG_DFL && app[sig].sa_handler == SIG_DFL);
		*old = ours ? app[sig] : cur;
	}
	if (rc == 0 && act) {
		app[sig] = *act;
		/* Stored as the kernel stores it: unknown flag bits cleared,
		 * SIGKILL and SIGSTOP never blocked. */
		app[sig].sa_flags &=
			(int)(SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART |
			      SA_NODEFER | SA_RESETHAND | SA_EXPOSE_TAGBITS_ | SA_RESTORER_);
		sigdelset(&app[sig].sa_mask, SIGKILL);
		sigdelset(&app[sig].sa_mask, SIGSTOP);
		owned[sig] = true;
		install(sig);
	}
	pthread_mutex_unlock(&lock);
	sfs_busy_exit();
	return rc;
}

void sfs_signals_run_app(int sig, const struct sigaction *a, struct sigaction *stored,
			 siginfo_t *info, void *ctx)
{
	if (a->sa_flags & SA_RESETHAND)
		stored->sa_handler = SIG_DFL;
	sigset_t mask = ((const ucontext_t *)ctx)->uc_sigmask; /* the kernel fills 64 bits */
	sigorset(&mask, &mask, &a->sa_mask);
	if (!(a->sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	pthread_sigmask(SIG_SETMASK, &mask, NULL); /* passes the kernel its 64 bits */
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(sig, info, ctx);
	else
		a->sa_handler(sig);
}

void sfs_signals_reset_child(void)
{
	sfs_mutex_reset_child(&lock);
	SFS_SET(sfs_deferred, 0);
	SFS_SET(sfs_busy, 0);
}
