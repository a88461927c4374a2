/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "reserve.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/vfs.h>

#include "../sys/global.h"
#include "../sys/self.h"
#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/signals.h"

/* A shard's reservation grows in steps of this much (a fallocate each,
 * about 12 us for 1 MiB on the test image), and shrinks by what each
 * relink needs. */
#define STEP (1 << 20)

/* One reserve file per shard, each with its own lock: threads appending to
 * files of their own fallocate and punch different inodes (one shared file
 * serialised them on its lock and the file system's inode lock: 16
 * appending threads ran at half the rate of 16 processes). */
struct shard {
	pthread_mutex_t lock;
	int fd;		   /* the reserve file (internal), -1 until needed */
	int64_t allocated; /* bytes of blocks it holds: [0, allocated) */
	int64_t owed;	   /* bytes staged and not yet relinked */
} __attribute__((aligned(64)));

static struct shard shards[SFS_RESERVE_SHARDS] = {
	[0 ... SFS_RESERVE_SHARDS - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1}};
SFS_HOT static atomic_bool unsupported; /* no fallocate here: ENOSPC comes at relink */

/* Caller holds s->lock. */
static int open_reserve(struct shard *s)
{
	int f = SFS_REAL(openat)(sfs_privdir(), ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (f < 0)
		return -errno;
	s->fd = sfs_internal_fd(f);
	return 0;
}

/* Gives back the blocks of s above what it owes. Caller holds s->lock. */
static void trim_locked(struct shard *s, int64_t keep)
{
	if (s->fd >= 0 && s->allocated > keep &&
	    SFS_REAL(fallocate)(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, keep,
				s->allocated - keep) == 0)
		s->allocated = keep;
}

static int take_in(struct shard *s, int64_t bytes)
{
	sfs_mutex_lock(&s->lock);
	int rc = 0;
	if (atomic_load(&unsupported))
		goto out;
	if (s->fd < 0 && open_reserve(s) != 0) {
		atomic_store(&unsupported, true);
		goto out;
	}
	if (s->owed + bytes > s->allocated) {
		int64_t want = SFS_ALIGN_UP(s->owed + bytes, (int64_t)SFS_BLOCK);
		int64_t to = SFS_MAX(want, s->allocated + STEP);
		if (SFS_REAL(fallocate)(s->fd, FALLOC_FL_KEEP_SIZE, s->allocated,
					to - s->allocated) != 0) {
			if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL) {
				atomic_store(&unsupported, true);
				goto out;
			}
			/* Perhaps exactly what this write needs still fits. */
			to = want;
			if (SFS_REAL(fallocate)(s->fd, FALLOC_FL_KEEP_SIZE, s->allocated,
						to - s->allocated) != 0) {
				rc = -ENOSPC;
				goto out;
			}
		}
		s->allocated = to;
	}
	s->owed += bytes;
out:
	sfs_mutex_unlock(&s->lock);
	return rc;
}

int sfs_reserve_take(int shard, int64_t bytes)
{
	if (bytes <= 0)
		return 0;
	struct shard *s = &shards[shard % SFS_RESERVE_SHARDS];
	int rc = take_in(s, bytes);
	if (rc != -ENOSPC)
		return rc;
	/* The other shards' steps ahead may be what the file system lacks:
	 * each gives back what it does not owe, and this one tries again, so
	 * that ENOSPC comes only when the owed bytes fill the file system. One
	 * shard locked at a time (no order between them). */
	for (int i = 0; i < SFS_RESERVE_SHARDS; i++) {
		sfs_mutex_lock(&shards[i].lock);
		trim_locked(&shards[i], SFS_ALIGN_UP(shards[i].owed, (int64_t)SFS_BLOCK));
		sfs_mutex_unlock(&shards[i].lock);
	}
	return take_in(s, bytes);
}

/* Whether the file system has room for a relink of `bytes` besides the
 * reservations: ROOM more than it needs free (fstatfs of the reserve
 * file, a fraction of a microsecond; a punch is a transaction). */
#define ROOM ((int64_t)64 << 20)
static bool room_for(const struct shard *s, int64_t bytes)
{
	struct statfs st;
	return fstatfs(s->fd, &st) == 0 &&
	       (int64_t)st.f_bavail > (bytes + ROOM) / (int64_t)st.f_bsize;
}

void sfs_reserve_give(int shard, int64_t bytes)
{
	if (bytes <= 0)
		return;
	struct shard *s = &shards[shard % SFS_RESERVE_SHARDS];
	sfs_mutex_lock(&s->lock);
	s->owed = SFS_MAX(s->owed - bytes, (int64_t)0);
	int64_t owed = SFS_ALIGN_UP(s->owed, (int64_t)SFS_BLOCK);
	if (s->fd >= 0 && room_for(s, bytes)) {
		/* The relink finds its blocks free: what stays above what is
		 * owed serves the appends that follow (a log that syncs each
		 * record would otherwise punch and refill the reservation at
		 * every sync), up to two steps of it. */
		if (s->allocated - owed > 2 * STEP)
			trim_locked(s, owed + STEP);
	} else {
		/* Free at least what the relink is about to allocate (the file
		 * system may be full of nothing but this reservation). */
		trim_locked(s,
			    SFS_MAX(owed, s->allocated - SFS_ALIGN_UP(bytes, (int64_t)SFS_BLOCK)));
	}
	sfs_mutex_unlock(&s->lock);
}

void sfs_reserve_reset_child(void)
{
	for (int i = 0; i < SFS_RESERVE_SHARDS; i++) {
		sfs_mutex_reset_child(&shards[i].lock);
		if (shards[i].fd >= 0)
			sfs_internal_close(shards[i].fd);
		SFS_SET(shards[i].fd, -1);
		SFS_SET(shards[i].allocated, 0);
		SFS_SET(shards[i].owed, 0);
	}
	SFS_SET(unsupported, false);
}
