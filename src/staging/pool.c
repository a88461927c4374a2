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
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/self.h"
#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/msg.h"
#include "../util/pmem.h"
#include "../util/stats.h"
#include "../util/threads.h"
#include "../util/signals.h"

#define POOL_MAX 256 /* the option's upper bound */

struct pooled {
	int fd;	   /* the data (ring, or .data) */
	int hfd;   /* the header's file (a ring's is fd) */
	char *map; /* ring: header and data; file: the header */
	int64_t cap;
	bool parked; /* named idle.* (struct sfs_stage) */
	uint64_t park_id;
};

SFS_HOT static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
SFS_HOT static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct pooled ready[3][POOL_MAX]; /* by kind: empty, ready to hand out */
SFS_HOT static int nready[3];
static struct pooled returned[POOL_MAX]; /* file stores given back, still to empty */
SFS_HOT static int nreturned;
SFS_HOT static int rings_out; /* rings made and not destroyed */
SFS_HOT static bool thread_started, stopping, housekeeping;
SFS_HOT static bool learn_pending; /* sfs_staging_learn_pmem asked, not yet done */
/* The housekeeping (inode.h: sfs_inode_evict_writable), set once at
 * start-up before the thread can run. */
SFS_HOT static void (*housekeep)(void);

void sfs_staging_set_housekeeping(void (*fn)(void))
{
	housekeep = fn;
}

/* The ring size: SPLITFS_STAGING_SIZE rounded up to a power of two, so a
 * file offset maps to off & (cap - 1); smaller when the application's
 * RLIMIT_FSIZE would not let the library make the file (the limit is the
 * application's, never the library's to meet: SIGXFSZ would end it).
 * -EFBIG when even the smallest ring does not fit. */
static int64_t ring_cap(void)
{
	int64_t cap = 1 << 16;
	while (cap < (int64_t)sfs_g.opt.staging_size)
		cap <<= 1;
	uint64_t lim = atomic_load(&sfs_g.fsize_limit);
	while (cap > (1 << 16) && (uint64_t)(SFS_STORE_HDR + cap) > lim)
		cap >>= 1;
	return (uint64_t)(SFS_STORE_HDR + cap) > lim ? -EFBIG : cap;
}

/* An unnamed file of the library's in <root>/.splitfs: a descriptor the
 * application does not know, or -errno. */
static int open_tmpfile(void)
{
	int priv = sfs_privdir();
	int fd = SFS_REAL(openat)(priv, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* No O_TMPFILE here: a named file, unlinked at once. */
		static atomic_uint seq;
		char name[64];
		snprintf(name, sizeof(name), "tmp.%u.%d.%u", (unsigned)sfs_g.euid,
			 (int)sfs_self_pid(), atomic_fetch_add(&seq, 1));
		fd = SFS_REAL(openat)(priv, name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0)
			SFS_REAL(unlinkat)(priv, name, 0);
	}
	return fd < 0 ? -errno : fd;
}

/* A store (format.h): allocated whole (a ring's stores then never meet a
 * full file system), its header initialised, mapped, never inherited by a
 * child (MADV_DONTFORK), held with an flock while this process lives. The
 * system calls run without the pool lock. */
static int make_store(int kind, struct pooled *p)
{
	int64_t cap = kind == SFS_STAGE_RING ? ring_cap() : 0;
	if (cap < 0)
		return (int)cap;
	int64_t len = SFS_STORE_HDR + cap;
	int fd = open_tmpfile();
	if (fd < 0)
		return fd;
	int rc = 0;
	char *m = MAP_FAILED;
	/* A store's blocks are the file system's free space: where it has not
	 * enough for them, no store (a sparse one would take the space its
	 * stores need only as they fill, and could meet a full file system
	 * in a store through the mapping). Without fallocate, sparse. */
	if (SFS_REAL(fallocate)(fd, 0, 0, len) != 0 &&
	    (errno == ENOSPC || errno == EDQUOT || SFS_REAL(ftruncate)(fd, len) != 0))
		rc = -errno;
	else if (SFS_REAL(flock)(fd, LOCK_EX | LOCK_NB) != 0)
		rc = -errno;
	else if ((m = SFS_REAL(mmap)(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				     0)) == MAP_FAILED)
		rc = -errno;
	/* A file store keeps its data in a second file, at the target's
	 * own offsets (format.h). */
	int dfd = kind == SFS_STAGE_FILE ? open_tmpfile() : fd;
	if (!rc && dfd < 0)
		rc = dfd;
	if (rc) {
		if (m != MAP_FAILED)
			munmap(m, (size_t)len);
		/* What a failed fallocate allocated is free when this returns
		 * (a closed unnamed file frees its blocks in the background). */
		SFS_REAL(ftruncate)(fd, 0);
		SFS_REAL(close)(fd);
		return rc;
	}
	madvise(m, (size_t)len, MADV_DONTFORK);
	struct sfs_store_hdr *h = (struct sfs_store_hdr *)m;
	h->magic = SFS_STORE_MAGIC;
	h->version = 1;
	h->layout = (uint32_t)kind;
	h->cap = (uint64_t)cap;
	p->hfd = sfs_internal_fd(fd);
	p->fd = kind == SFS_STAGE_FILE ? sfs_internal_fd(dfd) : p->hfd;
	p->map = m;
	p->cap = kind == SFS_STAGE_RING ? cap : 0;
	p->parked = false; /* never linked yet: bound by linkat */
	p->park_id = 0;
	return 0;
}

/* Until when (CLOCK_MONOTONIC ns) a new store is not tried: the file system
 * had no room for one a moment ago (a full file system would otherwise
 * cost every append a store made and thrown away). Under lock. */
SFS_HOT static uint64_t no_room_until;
#define NO_ROOM_NS (100 * 1000 * 1000)

/* Caller holds lock (for the ring budget). */
static int make(int kind, struct pooled *p)
{
	if (no_room_until && sfs_now_ns() < no_room_until)
		return -ENOSPC;
	if (kind == SFS_STAGE_RING) {
		if (rings_out >= SFS_MAX_RINGS)
			return -ENOBUFS;
		rings_out++;
	}
	sfs_mutex_unlock(&lock);
	int rc = make_store(kind, p);
	sfs_mutex_lock(&lock);
	if (rc && kind == SFS_STAGE_RING)
		rings_out--;
	no_room_until = rc == -ENOSPC || rc == -EDQUOT ? sfs_now_ns() + NO_ROOM_NS : 0;
	return rc;
}

static size_t map_len(int kind, const struct pooled *p)
{
	return kind == SFS_STAGE_RING ? (size_t)(SFS_STORE_HDR + p->cap) : SFS_STORE_HDR;
}

static void destroy(int kind, struct pooled *p)
{
	sfs_stage_unpark(kind == SFS_STAGE_FILE, p->parked, p->park_id);
	munmap(p->map, map_len(kind, p));
	/* Its blocks free now, not when the file system gets to the closed
	 * file (sfs_staging_release_pool: a full file system needs them). */
	SFS_REAL(ftruncate)(p->fd, 0);
	if (kind == SFS_STAGE_RING)
		rings_out--;
	if (p->hfd != p->fd)
		sfs_internal_close(p->hfd);
	sfs_internal_close(p->fd);
}

/* libpmem2's primitives, learnt from a page of a file of the library's own
 * on the managed file system: an application's file could be truncated
 * under the map (seen in the lab: "file length is equal 0", and the
 * process gave up on DAX flushes for good). */
static void learn_pmem(void)
{
	int fd = open_tmpfile();
	if (fd >= 0 && SFS_REAL(ftruncate)(fd, 4096) == 0)
		sfs_pmem_learn(fd);
	else
		sfs_pmem_learn_unclaim(); /* no file now: a later sync asks again */
	if (fd >= 0)
		SFS_REAL(close)(fd);
}

/* Keeps the default kind's pool full and empties returned files. */
static void *refill(void *unused)
{
	(void)unused;
	sfs_thread_mine();
	int kind = sfs_g.opt.relink == SFS_RELINK_EXCHANGE || sfs_g.opt.relink == SFS_RELINK_CLONE ?
			   SFS_STAGE_FILE :
			   SFS_STAGE_RING;
	int target = (int)sfs_g.opt.staging_files;
	sfs_mutex_lock(&lock);
	while (!stopping) {
		if (nreturned > 0) {
			struct pooled p = returned[--nreturned];
			sfs_mutex_unlock(&lock);
			/* Drops the data pages unwritten. */
			bool ok = SFS_REAL(ftruncate)(p.fd, 0) == 0;
			sfs_mutex_lock(&lock);
			p.cap = 0;
			if (ok && nready[SFS_STAGE_FILE] < target)
				ready[SFS_STAGE_FILE][nready[SFS_STAGE_FILE]++] = p;
			else
				destroy(SFS_STAGE_FILE, &p);
			continue;
		}
		/* File stores are made ahead here. Rings are not: they come
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
			sfs_mutex_unlock(&lock);
			learn_pmem();
			sfs_mutex_lock(&lock);
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
			sfs_mutex_unlock(&lock);
			if (housekeep)
				housekeep();
			sfs_mutex_lock(&lock);
			continue;
		}
		pthread_cond_wait(&wake, &lock);
	}
	thread_started = false;
	sfs_mutex_unlock(&lock);
	sfs_thread_not_mine();
	return NULL;
}

/* Caller holds lock. */
static void start_thread(void)
{
	if (thread_started || stopping)
		return;
	thread_started = sfs_thread_create(refill, NULL) == 0;
}

int sfs_staging_get(int kind, struct sfs_stage *st)
{
	struct pooled p = {.fd = -1, .hfd = -1};
	int rc = 0;
	sfs_mutex_lock(&lock);
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
	sfs_mutex_unlock(&lock);
	if (rc)
		return rc;
	if (kind == SFS_STAGE_FILE)
		sfs_stat_event(SFS_EV_staging_files_made, 1);
	st->kind = kind;
	st->fd = p.fd;
	st->hfd = p.hfd;
	st->map = p.map;
	st->hdr = (struct sfs_store_hdr *)p.map;
	st->cap = p.cap;
	st->bound = false;
	st->census = 0;
	st->parked = p.parked;
	st->spent = false; /* spent stores are not pooled */
	st->park_id = p.park_id;
	return 0;
}

void sfs_staging_put(struct sfs_stage *st)
{
	struct pooled p = {.fd = st->fd,
			   .hfd = st->hfd,
			   .map = st->map,
			   .cap = st->cap,
			   .parked = st->parked,
			   .park_id = st->park_id};
	int kind = st->kind;
	sfs_mutex_lock(&lock);
	if (st->spent) {
		/* Unnamed for good (sfs_stage_unbind): not bindable again. */
	} else if (kind == SFS_STAGE_RING && nready[kind] < (int)sfs_g.opt.staging_files) {
		ready[kind][nready[kind]++] = p; /* pages and all */
		kind = SFS_STAGE_NONE;
	} else if (kind == SFS_STAGE_FILE && nreturned < POOL_MAX) {
		returned[nreturned++] = p;
		start_thread();
		pthread_cond_signal(&wake);
		kind = SFS_STAGE_NONE;
	}
	if (kind != SFS_STAGE_NONE)
		destroy(kind, &p);
	sfs_mutex_unlock(&lock);
	st->kind = SFS_STAGE_NONE;
	st->fd = st->hfd = -1;
	st->map = NULL;
	st->hdr = NULL;
	st->cap = 0;
	st->parked = st->spent = false;
	st->park_id = 0;
}

int sfs_staging_release_pool(void)
{
	int n = 0;
	sfs_mutex_lock(&lock);
	for (int k = 1; k < 3; k++) {
		for (int i = 0; i < nready[k]; i++, n++)
			destroy(k, &ready[k][i]);
		nready[k] = 0;
	}
	sfs_mutex_unlock(&lock);
	return n;
}

void sfs_staging_kick(void)
{
	sfs_mutex_lock(&lock);
	if (!housekeeping) {
		housekeeping = true;
		start_thread();
		pthread_cond_signal(&wake);
	}
	sfs_mutex_unlock(&lock);
}

void sfs_staging_learn_pmem(void)
{
	sfs_mutex_lock(&lock);
	learn_pending = true;
	start_thread();
	pthread_cond_signal(&wake);
	sfs_mutex_unlock(&lock);
}

void sfs_staging_reset_child(void)
{
	sfs_stage_reset_child();
	sfs_mutex_reset_child(&lock);
	sfs_cond_reset_child(&wake);
	/* The stores' mappings were not inherited (MADV_DONTFORK). */
	for (int k = 1; k < 3; k++) {
		for (int i = 0; i < nready[k]; i++) {
			if (ready[k][i].hfd != ready[k][i].fd)
				sfs_internal_close(ready[k][i].hfd);
			sfs_internal_close(ready[k][i].fd);
		}
		SFS_SET(nready[k], 0);
	}
	for (int i = 0; i < nreturned; i++) {
		sfs_internal_close(returned[i].hfd);
		sfs_internal_close(returned[i].fd);
	}
	SFS_SET(nreturned, 0);
	SFS_SET(learn_pending, false);
	SFS_SET(rings_out, 0);
	SFS_SET(no_room_until, 0);
	SFS_SET(thread_started, false);
	SFS_SET(stopping, false);
	SFS_SET(housekeeping, false);
}

void sfs_staging_shutdown(void)
{
	sfs_mutex_lock(&lock);
	stopping = true;
	pthread_cond_signal(&wake);
	sfs_mutex_unlock(&lock);
}
