/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../init.h"
#include "../fs/inode.h"
#include "../interpose/real.h"
#include "../util/msg.h"
#include "../util/pmem.h"
#include "../util/stats.h"

#define POOL_MAX 256 /* the option's upper bound */

struct pooled {
	int fd;
	char *ring;
	int64_t cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct pooled ready[3][POOL_MAX]; /* by kind: empty, ready to hand out */
static int nready[3];
static int returned[POOL_MAX], nreturned; /* files given back, still to empty */
static int rings_out;			  /* rings made and not destroyed */
static bool thread_started, stopping, housekeeping;
static bool learn_pending; /* sfs_staging_learn_pmem asked, not yet done */
static pthread_t thread;

/* The ring size: SPLITFS_STAGING_SIZE rounded up to a power of two, so a
 * file offset maps to off & (cap - 1). */
static int64_t ring_cap(void)
{
	int64_t cap = 1 << 16;
	while (cap < (int64_t)sfs_g.opt.staging_size)
		cap <<= 1;
	return cap;
}

/* An unnamed file of the library's in <root>/.splitfs: a descriptor the
 * application does not know, or -errno. */
static int open_tmpfile(void)
{
	int fd = sfs_real.openat(sfs_g.priv_dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* No O_TMPFILE here: a named file, unlinked at once. */
		static atomic_uint seq;
		char name[64];
		snprintf(name, sizeof(name), "stage-%d-%u", (int)sfs_self_pid(),
			 atomic_fetch_add(&seq, 1));
		fd = sfs_real.openat(sfs_g.priv_dirfd, name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC,
				     0600);
		if (fd >= 0)
			sfs_real.unlinkat(sfs_g.priv_dirfd, name, 0);
	}
	return fd < 0 ? -errno : fd;
}

static int make_file(struct pooled *p)
{
	int fd = open_tmpfile();
	if (fd < 0)
		return fd;
	p->fd = sfs_internal_fd(fd);
	p->ring = NULL;
	p->cap = 0;
	return 0;
}

/* Caller holds lock (for the budget); the syscalls run without it. */
static int make_ring(struct pooled *p)
{
	if (rings_out >= SFS_MAX_RINGS)
		return -ENOBUFS;
	rings_out++;
	pthread_mutex_unlock(&lock);
	int64_t cap = ring_cap();
	int rc = 0;
	int fd = memfd_create("splitfs-staging", MFD_CLOEXEC);
	char *m = MAP_FAILED;
	if (fd < 0 || sfs_real.ftruncate(fd, cap) != 0 ||
	    (m = sfs_real.mmap(NULL, (size_t)cap, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
		    MAP_FAILED)
		rc = -errno;
	if (rc && fd >= 0)
		sfs_real.close(fd);
	pthread_mutex_lock(&lock);
	if (rc) {
		rings_out--;
		return rc;
	}
	p->fd = sfs_internal_fd(fd);
	p->ring = m;
	p->cap = cap;
	return 0;
}

static void destroy(int kind, struct pooled *p)
{
	if (kind == SFS_STAGE_RING) {
		munmap(p->ring, (size_t)p->cap);
		rings_out--;
	}
	sfs_internal_close(p->fd);
}

/* Caller holds lock. */
static int make(int kind, struct pooled *p)
{
	int rc;
	if (kind == SFS_STAGE_RING)
		return make_ring(p);
	pthread_mutex_unlock(&lock);
	rc = make_file(p);
	pthread_mutex_lock(&lock);
	return rc;
}

/* libpmem2's primitives, learnt from a page of a file of the library's own
 * on the managed file system: an application's file could be truncated
 * under the map (seen in the lab: "file length is equal 0", and the
 * process gave up on DAX flushes for good). */
static void learn_pmem(void)
{
	int fd = open_tmpfile();
	if (fd >= 0 && sfs_real.ftruncate(fd, 4096) == 0)
		sfs_pmem_learn(fd);
	else
		sfs_pmem_learn_unclaim(); /* no file now: a later sync asks again */
	if (fd >= 0)
		sfs_real.close(fd);
}

/* Keeps the default kind's pool full and empties returned files. */
static void *refill(void *unused)
{
	(void)unused;
	int kind = sfs_g.opt.relink == SFS_RELINK_EXCHANGE || sfs_g.opt.relink == SFS_RELINK_CLONE
			   ? SFS_STAGE_FILE
			   : SFS_STAGE_RING;
	int target = (int)sfs_g.opt.staging_files;
	pthread_mutex_lock(&lock);
	while (!stopping) {
		if (nreturned > 0) {
			int fd = returned[--nreturned];
			pthread_mutex_unlock(&lock);
			bool ok = sfs_real.ftruncate(fd, 0) == 0;
			pthread_mutex_lock(&lock);
			struct pooled p = {.fd = fd};
			if (ok && nready[SFS_STAGE_FILE] < target)
				ready[SFS_STAGE_FILE][nready[SFS_STAGE_FILE]++] = p;
			else
				destroy(SFS_STAGE_FILE, &p);
			continue;
		}
		/* Staging files are made ahead here. Rings are not: they come
		 * back with their pages when files close, and the rare miss
		 * makes one on the spot (sfs_staging_get). */
		if (kind == SFS_STAGE_FILE && nready[kind] < target) {
			struct pooled p;
			int rc = make(kind, &p);
			if (rc) {
				if (rc != -ENOBUFS)
					sfs_warn("cannot make staging stores: %s", strerror(-rc));
				break;
			}
			ready[kind][nready[kind]++] = p;
			continue;
		}
		if (learn_pending) {
			learn_pending = false;
			pthread_mutex_unlock(&lock);
			learn_pmem();
			pthread_mutex_lock(&lock);
			continue;
		}
		if (housekeeping) {
			/* A moment later: a file is often reopened right after
			 * its close, and its inode is then still useful. */
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 50 * 1000 * 1000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&wake, &lock, &until);
			housekeeping = false;
			pthread_mutex_unlock(&lock);
			sfs_inode_evict_writable();
			pthread_mutex_lock(&lock);
			continue;
		}
		pthread_cond_wait(&wake, &lock);
	}
	thread_started = false;
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Caller holds lock. */
static void start_thread(void)
{
	if (thread_started || stopping)
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

int sfs_staging_get(int kind, struct sfs_stage *st)
{
	struct pooled p = {.fd = -1};
	int rc = 0;
	pthread_mutex_lock(&lock);
	if (nready[kind] > 0)
		p = ready[kind][--nready[kind]];
	else
		rc = make(kind, &p);
	/* Wake the thread only when there is something for it to do: a
	 * context switch per file would cost more than it saves. */
	if (kind == SFS_STAGE_FILE && nready[kind] < (int)sfs_g.opt.staging_files) {
		start_thread();
		pthread_cond_signal(&wake);
	}
	pthread_mutex_unlock(&lock);
	if (rc)
		return rc;
	if (kind == SFS_STAGE_FILE)
		sfs_stat_event(SFS_EV_staging_files_made, 1);
	st->kind = kind;
	st->fd = p.fd;
	st->ring = p.ring;
	st->cap = p.cap;
	return 0;
}

void sfs_staging_put(struct sfs_stage *st)
{
	struct pooled p = {.fd = st->fd, .ring = st->ring, .cap = st->cap};
	int kind = st->kind;
	pthread_mutex_lock(&lock);
	if (kind == SFS_STAGE_RING && nready[kind] < (int)sfs_g.opt.staging_files) {
		ready[kind][nready[kind]++] = p; /* pages and all */
		kind = SFS_STAGE_NONE;
	} else if (kind == SFS_STAGE_FILE && nreturned < POOL_MAX) {
		returned[nreturned++] = p.fd;
		start_thread();
		pthread_cond_signal(&wake);
		kind = SFS_STAGE_NONE;
	}
	if (kind != SFS_STAGE_NONE)
		destroy(kind, &p);
	pthread_mutex_unlock(&lock);
	st->kind = SFS_STAGE_NONE;
	st->fd = -1;
	st->ring = NULL;
	st->cap = 0;
}

void sfs_staging_kick(void)
{
	pthread_mutex_lock(&lock);
	if (!housekeeping) {
		housekeeping = true;
		start_thread();
		pthread_cond_signal(&wake);
	}
	pthread_mutex_unlock(&lock);
}

void sfs_staging_learn_pmem(void)
{
	pthread_mutex_lock(&lock);
	learn_pending = true;
	start_thread();
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
}

void sfs_staging_reset_child(void)
{
	pthread_mutex_init(&lock, NULL);
	pthread_cond_init(&wake, NULL);
	for (int k = 1; k < 3; k++) {
		for (int i = 0; i < nready[k]; i++)
			destroy(k, &ready[k][i]);
		nready[k] = 0;
	}
	for (int i = 0; i < nreturned; i++)
		sfs_internal_close(returned[i]);
	nreturned = 0;
	learn_pending = false;
	rings_out = 0;
	thread_started = false;
	stopping = false;
	housekeeping = false;
}

void sfs_staging_shutdown(void)
{
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
}
