/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "threads.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../sys/real.h"
#include "dirscan.h"
#include "signals.h"

#define MAX_MINE 16

SFS_HOT static _Atomic pid_t mine[MAX_MINE];
/* main_gone: the main thread called pthread_exit; watching: the watcher
 * runs. The watcher is needed once both the main thread is gone and a
 * thread of the library's exists, in either order: a dormant process
 * (init.h) may start its first thread after its main thread left. */
SFS_HOT static atomic_bool main_gone;
SFS_HOT static atomic_bool watching;
static void *watch(void *unused);
static void start_watcher(void);
/* Threads created and not yet in sfs_thread_mine; raised under start_lock,
 * which a fork holds from its prepare handler to its end. */
SFS_HOT static atomic_int starting;
SFS_HOT static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

int sfs_thread_create(void *(*fn)(void *), void *arg)
{
	pthread_mutex_lock(&start_lock);
	atomic_fetch_add(&starting, 1);
	pthread_mutex_unlock(&start_lock);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits it */
	pthread_t t;
	int rc = pthread_create(&t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		pthread_detach(t);
	else
		atomic_fetch_sub(&starting, 1);
	/* Sequentially consistent against sfs_main_thread_exiting: it stores
	 * main_gone then reads starting and mine[], this raised starting then
	 * reads main_gone, so one of the two sees the other and starts it. */
	if (rc == 0 && fn != watch && atomic_load(&main_gone))
		start_watcher();
	return rc;
}

void sfs_threads_fork_prepare(void)
{
	pthread_mutex_lock(&start_lock);
	for (int i = 0; i < 100000 && atomic_load(&starting) > 0; i++) {
		struct timespec t = {0, 10 * 1000};
		nanosleep(&t, NULL);
	}
}

void sfs_threads_fork_done(void)
{
	pthread_mutex_unlock(&start_lock);
}

void sfs_thread_mine(void)
{
	pid_t tid = (pid_t)SFS_REAL(syscall)(SYS_gettid);
	/* Listed before it stops counting as starting: library_has_threads
	 * sees it at every moment. */
	for (int i = 0; i < MAX_MINE; i++) {
		pid_t zero = 0;
		if (atomic_compare_exchange_strong(&mine[i], &zero, tid))
			break;
	}
	atomic_fetch_sub(&starting, 1);
}

void sfs_thread_not_mine(void)
{
	pid_t tid = (pid_t)SFS_REAL(syscall)(SYS_gettid);
	for (int i = 0; i < MAX_MINE; i++) {
		pid_t t = tid;
		if (atomic_compare_exchange_strong(&mine[i], &t, 0))
			return;
	}
}

static bool is_mine(pid_t tid)
{
	for (int i = 0; i < MAX_MINE; i++)
		if (atomic_load(&mine[i]) == tid)
			return true;
	return false;
}

/* Whether thread tid still runs (an exited main thread stays listed, a
 * zombie, until the whole group ends). */
static bool running(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (sfs_kernel_read_text(path, buf, sizeof(buf)) <= 0)
		return false;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static int application_threads(void)
{
	int dfd = SFS_REAL(open)("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 1;
	int n = 0;
	struct sfs_dirscan scan;
	sfs_dirscan_start(&scan, dfd, sfs_kernel_getdents64);
	const struct dirent64 *e;
	while ((e = sfs_dirscan_next(&scan)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		pid_t tid = (pid_t)atoi(e->d_name);
		if (!is_mine(tid) && running(tid))
			n++;
	}
	SFS_REAL(close)(dfd);
	return n;
}

static void *watch(void *unused)
{
	(void)unused;
	sfs_thread_mine();
	for (;;) {
		struct timespec t = {0, 10 * 1000 * 1000};
		nanosleep(&t, NULL);
		if (application_threads() == 0)
			exit(0); /* what glibc does when the last thread exits */
	}
	return NULL;
}

static void start_watcher(void)
{
	if (!atomic_exchange(&watching, true))
		sfs_thread_create(watch, NULL);
}

static bool library_has_threads(void)
{
	if (atomic_load(&starting) > 0)
		return true;
	for (int i = 0; i < MAX_MINE; i++)
		if (atomic_load(&mine[i]) != 0)
			return true;
	return false;
}

void sfs_main_thread_exiting(void)
{
	atomic_store(&main_gone, true);
	if (library_has_threads())
		start_watcher();
}

void sfs_threads_reset_child(void)
{
	sfs_mutex_reset_child(&start_lock);
	SFS_SET(starting, 0);
	for (int i = 0; i < MAX_MINE; i++)
		SFS_SET(mine[i], 0);
	SFS_SET(main_gone, false);
	SFS_SET(watching, false);
}
