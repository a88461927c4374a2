/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "lanes.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../sys/global.h"
#include "../sys/real.h"
#include "../sys/self.h"
#include "../util/clock.h"
#include "../util/signals.h"
#include "../util/stats.h"
#include "libsys.h"
#include "logfile.h"
#include "recover.h"

static struct {
	pthread_mutex_t lock; /* one lane opened (or all closed) at a time */
	int64_t retry_at;     /* ns (monotonic): after a lane could not be made */
	_Atomic unsigned n;   /* lanes[0..n) are open */
	struct sfs_lane lanes[SFS_LOG_LANES];
} S = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.lanes[0].fd = -1,
};

/* The lane this thread wrote its last record into. */
static __thread unsigned my_lane __attribute__((tls_model("initial-exec")));

struct sfs_lane *sfs_lane_main(void)
{
	return &S.lanes[0];
}

void sfs_lanes_start(int fd, const struct sfs_pmem_map *pm, const char *name)
{
	struct sfs_lane *ln = &S.lanes[0];
	ln->fd = fd;
	ln->pm = *pm;
	snprintf(ln->name, sizeof(ln->name), "%s", name);
	atomic_store(&ln->tail, SFS_LOG_RECORDS_OFF);
	atomic_store(&ln->writers, 0);
	atomic_store_explicit(&S.n, 1, memory_order_release);
}

/* Opens lane n (a free log taken, or a new one), unless another thread is
 * opening one or lanes could not be made a moment ago. 0 or -errno. */
static int open_lane(unsigned n, const struct sfs_lane_set *set)
{
	if (sfs_mutex_trylock(&S.lock) != 0)
		return -EBUSY;
	int rc = -EBUSY;
	int64_t now = sfs_coarse_ns();
	/* Under descriptor pressure (fs/process.h: sfs_fds_relieve) the
	 * application's descriptors come first: no more lanes. */
	if (atomic_load(&S.n) != n || now < S.retry_at ||
	    atomic_load_explicit(&sfs_g.fd_pressure, memory_order_relaxed))
		goto out;
	struct sfs_lane *ln = &S.lanes[n];
	sfs_log_lane_name(ln->name, sizeof(ln->name), S.lanes[0].name, n);
	int fd = sfs_logfile_claim_free(ln->name, set->size);
	if (fd >= 0) {
		rc = sfs_logfile_write_header(fd, set->gen, set->size, set->nonce, n);
		if (rc) {
			/* Named, and no record of this set in it: given back
			 * with the set (at exit, or by recovery). */
			SFS_REAL(close)(fd);
			fd = rc;
		}
	} else {
		fd = sfs_logfile_create(ln->name, set->size, set->nonce, n);
	}
	if (fd < 0) {
		rc = fd;
		S.retry_at = now + 1000000000; /* meanwhile threads share the lanes there are */
		sfs_stat_event(SFS_EV_log_lane_failures, 1);
		goto out;
	}
	ln->pm = (struct sfs_pmem_map){0};
	if (S.lanes[0].pm.addr) /* on DAX, as the main log (else pwritev2, as off DAX) */
		sfs_pmem_map(fd, set->size, &ln->pm);
	ln->fd = sfs_internal_fd(fd);
	atomic_store(&ln->tail, SFS_LOG_RECORDS_OFF);
	atomic_store(&ln->writers, 0);
	atomic_store_explicit(&S.n, n + 1, memory_order_release);
	sfs_stat_event(SFS_EV_log_lanes, 1);
	rc = 0;
out:
	sfs_mutex_unlock(&S.lock);
	return rc;
}

struct sfs_lane *sfs_lane_pick(const struct sfs_lane_set *set)
{
	unsigned n = atomic_load_explicit(&S.n, memory_order_acquire);
	unsigned mine = my_lane < n ? my_lane : 0;
	if (atomic_load_explicit(&S.lanes[mine].writers, memory_order_relaxed) != 0) {
		unsigned i = 0;
		while (i < n && atomic_load_explicit(&S.lanes[i].writers, memory_order_relaxed))
			i++;
		if (i < n || (n < SFS_LOG_LANES && open_lane(n, set) == 0))
			mine = i;
		my_lane = mine;
	}
	atomic_fetch_add(&S.lanes[mine].writers, 1);
	return &S.lanes[mine];
}

struct sfs_lane *sfs_lanes_open(unsigned *n)
{
	*n = atomic_load_explicit(&S.n, memory_order_acquire);
	return S.lanes;
}

void sfs_lanes_rewind(void)
{
	unsigned n = atomic_load(&S.n);
	for (unsigned i = 0; i < n; i++)
		atomic_store(&S.lanes[i].tail, SFS_LOG_RECORDS_OFF);
}

void sfs_lanes_close(int dirfd)
{
	sfs_mutex_lock(&S.lock); /* no lane is being opened */
	for (unsigned i = atomic_load(&S.n); i-- > 0;) {
		struct sfs_lane *ln = &S.lanes[i];
		if (dirfd >= 0) {
			char freed[96];
			snprintf(freed, sizeof(freed), "log.free.%d.%lld.%u", (int)sfs_self_pid(),
				 (long long)time(NULL), i);
			sfs_log_retire(sfs_lib_sys(), dirfd, ln->name, freed, sfs_g.euid);
		}
		sfs_pmem_unmap(&ln->pm);
		sfs_internal_close(ln->fd);
		ln->fd = -1;
	}
	atomic_store(&S.n, 0);
	sfs_mutex_unlock(&S.lock);
}

void sfs_lanes_reset_child(void)
{
	/* The parent's descriptors share its flocks: closing our copies keeps
	 * its logs locked. */
	unsigned n = atomic_load(&S.n);
	for (unsigned i = 0; i < n; i++) {
		sfs_pmem_unmap(&S.lanes[i].pm);
		if (S.lanes[i].fd >= 0)
			sfs_internal_close(S.lanes[i].fd);
		S.lanes[i].fd = -1;
	}
	SFS_SET(S.n, 0);
	SFS_SET(my_lane, 0);
	SFS_SET(S.retry_at, 0);
	sfs_mutex_reset_child(&S.lock);
}
