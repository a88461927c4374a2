/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "reserve.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>

#include "../sys/global.h"
#include "../sys/self.h"
#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/signals.h"

/* The reservation grows in steps of this much (a fallocate each, about
 * 12 us for 1 MiB on the test image), and shrinks by what each relink needs. */
#define STEP (1 << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;	  /* the reserve file (internal) */
static int64_t allocated; /* bytes of blocks it holds: [0, allocated) */
static int64_t owed;	  /* bytes staged and not yet relinked */
static bool unsupported;  /* no fallocate here: ENOSPC comes at relink */

static int open_reserve(void)
{
	int f = sfs_real.openat(sfs_g.priv_dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (f < 0)
		return -errno;
	fd = sfs_internal_fd(f);
	return 0;
}

int sfs_reserve_take(int64_t bytes)
{
	if (bytes <= 0)
		return 0;
	sfs_mutex_lock(&lock);
	int rc = 0;
	if (unsupported)
		goto out;
	if (fd < 0 && open_reserve() != 0) {
		unsupported = true;
		goto out;
	}
	if (owed + bytes > allocated) {
		int64_t want = SFS_ALIGN_UP(owed + bytes, (int64_t)SFS_BLOCK);
		int64_t to = SFS_MAX(want, allocated + STEP);
		if (sfs_real.fallocate(fd, FALLOC_FL_KEEP_SIZE, allocated, to - allocated) != 0) {
			if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL) {
				unsupported = true;
				goto out;
			}
			/* Perhaps exactly what this write needs still fits. */
			to = want;
			if (sfs_real.fallocate(fd, FALLOC_FL_KEEP_SIZE, allocated,
					       to - allocated) != 0) {
				rc = -ENOSPC;
				goto out;
			}
		}
		allocated = to;
	}
	owed += bytes;
out:
	sfs_mutex_unlock(&lock);
	return rc;
}

void sfs_reserve_give(int64_t bytes)
{
	if (bytes <= 0)
		return;
	sfs_mutex_lock(&lock);
	owed = SFS_MAX(owed - bytes, (int64_t)0);
	/* Free at least what the relink is about to allocate (the file
	 * system may be full of nothing but this reservation); what stays
	 * above what is owed serves the appends that follow. */
	int64_t keep = SFS_MAX(SFS_ALIGN_UP(owed, (int64_t)SFS_BLOCK),
			       allocated - SFS_ALIGN_UP(bytes, (int64_t)SFS_BLOCK));
	if (fd >= 0 && allocated > keep &&
	    sfs_real.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, keep,
			       allocated - keep) == 0)
		allocated = keep;
	sfs_mutex_unlock(&lock);
}

void sfs_reserve_reset_child(void)
{
	pthread_mutex_init(&lock, NULL);
	if (fd >= 0)
		sfs_internal_close(fd);
	fd = -1;
	allocated = owed = 0;
	unsupported = false;
}
