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

/* The calling thread is the library's (until it returns). */
void sfs_thread_mine(void);
void sfs_thread_not_mine(void);

/* The main thread is about to call pthread_exit. */
void sfs_main_thread_exiting(void);

/* A forked child: only the forking thread came along. */
void sfs_threads_reset_child(void);

#endif
