/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "../init.h"
#include "../interpose/real.h"
#include "../util/msg.h"
#include "../util/stats.h"

#define POOL_MAX 256 /* the option's upper bound */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int ready[POOL_MAX], nready;   /* empty, ready to hand out */
static int returned[POOL_MAX], nreturned; /* given back, still to empty */
static bool thread_started, stopping;
static pthread_t thread;

static int make_file(void)
{
	int fd = sfs_real.openat(sfs_g.priv_dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* No O_TMPFILE here: a named file, unlinked at once. */
		static atomic_uint seq;
		char name[64];
		snprintf(name, sizeof(name), "stage-%d-%u", (int)getpid(), atomic_fetch_add(&seq, 1));
		fd = sfs_real.openat(sfs_g.priv_dirfd, name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC,
				     0600);
		if (fd >= 0)
			sfs_real.unlinkat(sfs_g.priv_dirfd, name, 0);
	}
	if (fd < 0)
		return -errno;
	sfs_stat_event(SFS_EV_staging_files_made, 1);
	return sfs_internal_fd(fd);
}

static int target(void)
{
	return (int)sfs_g.opt.staging_files;
}

static void *refill(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&lock);
	while (!stopping) {
		if (nreturned > 0) {
			int fd = returned[--nreturned];
			pthread_mutex_unlock(&lock);
			bool ok = sfs_real.ftruncate(fd, 0) == 0;
			pthread_mutex_lock(&lock);
			if (ok && nready < target())
				ready[nready++] = fd;
			else
				sfs_internal_close(fd);
			continue;
		}
		if (nready < target()) {
			pthread_mutex_unlock(&lock);
			int fd = make_file();
			pthread_mutex_lock(&lock);
			if (fd < 0) {
				sfs_warn("cannot create staging files in %s: %s", sfs_g.priv_dir,
					 strerror(-fd));
				break;
			}
			ready[nready++] = fd;
			continue;
		}
		pthread_cond_wait(&wake, &lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Caller holds lock. */
static void start_thread(void)
{
	if (thread_started)
		return;
	thread_started = true;
	/* The thread must not take signals meant for the application. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&thread, NULL, refill, NULL) != 0)
		thread_started = false;
	else
		pthread_detach(thread);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int sfs_staging_get(void)
{
	pthread_mutex_lock(&lock);
	start_thread();
	int fd = nready > 0 ? ready[--nready] : -1;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
	return fd >= 0 ? fd : make_file();
}

void sfs_staging_put(int fd)
{
	pthread_mutex_lock(&lock);
	if (thread_started && !stopping && nreturned < POOL_MAX) {
		returned[nreturned++] = fd;
		fd = -1;
		pthread_cond_signal(&wake);
	}
	pthread_mutex_unlock(&lock);
	if (fd >= 0)
		sfs_internal_close(fd);
}

void sfs_staging_reset_child(void)
{
	pthread_mutex_init(&lock, NULL);
	pthread_cond_init(&wake, NULL);
	for (int i = 0; i < nready; i++)
		sfs_internal_close(ready[i]);
	for (int i = 0; i < nreturned; i++)
		sfs_internal_close(returned[i]);
	nready = nreturned = 0;
	thread_started = false;
	stopping = false;
}

void sfs_staging_shutdown(void)
{
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
}
