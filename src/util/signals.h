/* SPDX-License-Identifier: Apache-2.0 */
/* The application's signal handlers, and the library's critical sections.
 *
 * A handler runs on whatever thread the signal interrupts, wherever it is:
 * inside the library, holding an inode's lock or a table's, a handler that
 * writes to a managed file would wait for that very lock (POSIX makes
 * write() async-signal-safe; the kernel's write never runs "inside"
 * another). So the library counts, per thread, the critical sections it is
 * in (every lock it takes, every lock-free read of a mapping), and the
 * handlers the application installs run through a trampoline: a signal
 * that arrives inside a critical section is queued (per thread, as the
 * kernel would keep it pending) and raised again, with its siginfo, when
 * the thread leaves the outermost section; the kernel then delivers it as
 * it would have (the handler's mask, not inside a handler that blocks it).
 * Every managed call is one section (interpose/wrap.h).
 * Faults the thread itself raises (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP
 * from an instruction) are never deferred.
 *
 * A signal whose action is the default one that ends the process (SIGTERM,
 * SIGINT, SIGHUP, SIGPIPE, SIGALRM, ...) first puts what the process staged
 * into its files, then ends it as the default action would (same signal,
 * same core dump): the kernel's page cache would have held those bytes.
 *
 * The application sees its own dispositions: sigaction and the signal()
 * family answer with what it set (interpose/signal.c). */
#ifndef SFS_UTIL_SIGNALS_H
#define SFS_UTIL_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

#include "compiler.h"

/* Critical sections of the calling thread (initial-exec TLS: a signal
 * handler reads it). */
extern __thread int sfs_busy __attribute__((tls_model("initial-exec")));
extern __thread int sfs_deferred __attribute__((tls_model("initial-exec")));

void sfs_run_deferred(void);

static inline void sfs_busy_enter(void)
{
	sfs_busy++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void sfs_busy_exit(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (--sfs_busy == 0 && sfs_unlikely(sfs_deferred))
		sfs_run_deferred();
}

/* The library's mutexes: critical sections. */
#include <pthread.h>
static inline void sfs_mutex_lock(pthread_mutex_t *m)
{
	sfs_busy_enter();
	pthread_mutex_lock(m);
}

static inline int sfs_mutex_trylock(pthread_mutex_t *m)
{
	sfs_busy_enter();
	int rc = pthread_mutex_trylock(m);
	if (rc)
		sfs_busy_exit();
	return rc;
}

static inline void sfs_mutex_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
	sfs_busy_exit();
}

/* In a forked child: makes *m a fresh unlocked mutex (another thread of
 * the parent may have held it at the fork). One still in its initial state
 * is left as it is: writing it would copy its page, and the first call of
 * pthread_mutex_init in a child binds the symbol there; both are page
 * faults in every child, most of which only exec or exit. ThreadSanitizer
 * builds call pthread_mutex_init, which they track. */
static inline void sfs_mutex_reset_child(pthread_mutex_t *m)
{
#if SFS_TSAN
	pthread_mutex_init(m, NULL);
#else
	const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER; /* not static: no page to read */
	if (__builtin_memcmp(m, &fresh, sizeof(fresh)) != 0)
		__builtin_memcpy(m, &fresh, sizeof(fresh));
#endif
}

/* The same for a condition variable. */
static inline void sfs_cond_reset_child(pthread_cond_t *c)
{
#if SFS_TSAN
	pthread_cond_init(c, NULL);
#else
	const pthread_cond_t fresh = PTHREAD_COND_INITIALIZER;
	if (__builtin_memcmp(c, &fresh, sizeof(fresh)) != 0)
		__builtin_memcpy(c, &fresh, sizeof(fresh));
#endif
}

/* At start-up: from now on the application's sigaction calls are the
 * library's (its handlers run outside the library's critical sections).
 * before_exit runs before a signal's default action ends the process (it
 * must neither wait nor allocate: it may interrupt any code), once armed. */
void sfs_signals_install(void (*before_exit)(void));

/* Before the process has anything to flush (its first inode): looks at
 * the dispositions the application has not set through the library
 * (inherited, or set past it) and takes them over: a handler is deferred,
 * a default action that ends the process flushes first. Once; until then
 * the process has nothing before_exit would do, and a start saves the ~45
 * sigaction calls of the look. */
void sfs_signals_arm(void);

/* Whether the library virtualises the disposition of sig. */
bool sfs_signals_own(int sig);

/* The application's sigaction on sig (sfs_signals_own). */
int sfs_signals_action(int sig, const struct sigaction *act, struct sigaction *old);

/* From a handler of the library whose kernel action is not the
 * application's (the guard's SIGSEGV and SIGBUS, the lease signal): runs
 * the application's action a (a copy of *stored, a handler) as the kernel
 * would deliver it. SA_RESETHAND makes *stored SIG_DFL, its flags kept;
 * the thread's mask becomes the interrupted code's (from ctx, the
 * handler's ucontext) plus a's sa_mask plus sig unless SA_NODEFER, which
 * the library's action did not block; the return from the library's
 * handler restores the interrupted mask (sigreturn reads it from ctx).
 * Async-signal-safe. */
void sfs_signals_run_app(int sig, const struct sigaction *a, struct sigaction *stored,
			 siginfo_t *info, void *ctx);

/* A forked child: no deferred signal is its own. */
void sfs_signals_reset_child(void);

#endif
