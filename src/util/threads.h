/* SPDX-License-Identifier: Apache-2.0 */
/* The library's own threads, and the end of a process whose main thread
 * called pthread_exit.
 *
 * glibc ends such a process when its last thread exits, counting every
 * thread: the library's background threads (the lease service, the
 * staging pool) would keep it alive after the application's last thread
 * is gone. So the library's threads say so, and once the main thread has
 * called pthread_exit a watcher ends the process with exit(0), as glibc
 * would, when no thread of the application's is left. */
#ifndef SFS_UTIL_THREADS_H
#define SFS_UTIL_THREADS_H

/* Starts one of the library's threads, detached, with every signal
 * blocked (signals are the application's); 0 or an error number. The
 * thread's first call must be sfs_thread_mine, which ends its start. */
int sfs_thread_create(void *(*fn)(void *), void *arg);

/* The calling thread is the library's (until it returns). */
void sfs_thread_mine(void);
void sfs_thread_not_mine(void);

/* fork's prepare handler: waits (at most a second) until every thread the
 * library started has begun to run, and holds new starts off until
 * sfs_threads_fork_done (parent) or sfs_threads_reset_child. A starting
 * thread allocates inside a sanitizer's runtime, whose allocator is not
 * fork-safe (GCC 12's libasan has no fork handler): a child forked then
 * inherits its lock held and hangs at its first allocation. */
void sfs_threads_fork_prepare(void);
void sfs_threads_fork_done(void);

/* The main thread is about to call pthread_exit (also in a dormant
 * process, which may start the library's threads later). */
void sfs_main_thread_exiting(void);

/* A forked child: only the forking thread came along. */
void sfs_threads_reset_child(void);

#endif
