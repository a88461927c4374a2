/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "census.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/real.h"
#include "../sys/self.h"
#include "../util/compiler.h"
#include "../util/dirscan.h"
#include "format.h"

/* The segment (census.h for its name). */
struct census_seg {
	uint64_t magic;	     /* SEG_MAGIC once its maker filled it in */
	uint8_t boot_id[16]; /* the boot, device and .splitfs it counts */
	uint64_t dir_btime;  /* ns */
	uint64_t dev;
	uint64_t dir_ino;
	_Atomic uint64_t id;	/* random, never 0: stores name the census that counts them */
	_Atomic uint32_t ready; /* the maker counted what was bound before it */
	uint32_t pad;
	_Atomic int64_t bound; /* stores linked by a target's name */
	char line[56];	       /* the counter alone on its cache line */
};
static_assert(sizeof(struct census_seg) == 128 && offsetof(struct census_seg, bound) == 64,
	      "the segment's layout");
static_assert(sizeof(_Atomic int64_t) == 8 && ATOMIC_LLONG_LOCK_FREE == 2,
	      "processes share the counter: lock-free atomics only");

/* The census's page, then the area the user's processes share files by
 * (fs/share.h). A segment an older library made is one page: a process of
 * this one grows it (fallocate below), zeros, as the area starts. */
#define CENSUS_PAGE 4096
#define SEG_SIZE (CENSUS_PAGE + SFS_CENSUS_SHARE_BYTES)
#define SEG_MAGIC 0x3153555345434653ULL /* "SFCENSU1" */

enum census_state {
	CENSUS_NONE,	  /* for nobody of this user: count nothing */
	CENSUS_BROKEN,	  /* others may count, this process cannot: bind nothing */
	CENSUS_COUNTING,  /* mapped: count; skip once ready and checked */
	CENSUS_UNTRUSTED, /* mapped, but not this file system's: count, never skip */
};

SFS_HOT static _Atomic int state = CENSUS_BROKEN; /* enum census_state */
SFS_HOT static struct census_seg *seg;
SFS_HOT static atomic_bool trusted;
SFS_HOT static bool maker;	       /* this process made the segment: it counts what is bound */
SFS_HOT static struct census_seg self; /* the identity this process's segment must have */

/* This file system instance: its device, its .splitfs's inode and birth
 * time (0 where the file system keeps none). */
static void identify(void)
{
	memset(&self, 0, sizeof(self));
	self.magic = SEG_MAGIC;
	memcpy(self.boot_id, sfs_g.boot_id, sizeof(self.boot_id));
	self.dev = (uint64_t)sfs_g.root_dev;
	/* As the start found .splitfs (setup_root's statx). */
	self.dir_ino = (uint64_t)sfs_g.priv_ino;
	self.dir_btime = sfs_g.priv_btime_ns;
}

/* Stores bound by this user's name prefix in .splitfs (a file store's
 * .data companion is not a second store). */
static int64_t count_bound(void)
{
	char prefix[32];
	int pl = snprintf(prefix, sizeof(prefix), "stage.%u.", (unsigned)sfs_g.euid);
	int dfd = SFS_REAL(openat)(sfs_privdir(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return INT64_MAX / 2; /* unknown: never clear */
	int64_t n = 0;
	struct sfs_dirscan scan;
	sfs_dirscan_start(&scan, dfd, sfs_kernel_getdents64);
	const struct dirent64 *de;
	while ((de = sfs_dirscan_next(&scan)) != NULL)
		if (strncmp(de->d_name, prefix, (size_t)pl) == 0 && !sfs_store_is_data(de->d_name))
			n++;
	SFS_REAL(close)(dfd);
	return n;
}

/* What an errno of opening or making the segment says: the same for every
 * process of the user (no /dev/shm, a name someone else planted), or this
 * process's trouble (out of descriptors or memory). */
static enum census_state failed(int err)
{
	switch (err) {
	case ENOENT:
	case EACCES:
	case EPERM:
	case EROFS:
	case ELOOP:
	case ENOTDIR:
		return CENSUS_NONE;
	default:
		return CENSUS_BROKEN;
	}
}

static enum census_state attach(void)
{
	identify();
	char path[128];
	size_t pl = sfs_decname(path, sizeof(path), "/dev/shm/" SFS_CENSUS_PREFIX,
				(const uint64_t[]){sfs_g.euid}, 1);
	sfs_census_suffix(path + pl, sizeof(path) - pl, self.dev, self.dir_ino, self.dir_btime);
	/* Every process but the first finds it: open first, make it only
	 * where it is missing (and open it again if another made it since). */
	int fl = O_RDWR | O_NOFOLLOW | O_CLOEXEC;
	int fd = SFS_REAL(open)(path, fl);
	if (fd < 0 && errno == ENOENT) {
		fd = SFS_REAL(open)(path, fl | O_CREAT | O_EXCL, 0600);
		maker = fd >= 0;
		if (!maker && errno == EEXIST)
			fd = SFS_REAL(open)(path, fl);
	}
	if (fd < 0)
		return failed(errno);
	/* Never another user's, nor one that others may write. */
	struct stat st;
	if (SFS_REAL(fstat)(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != sfs_g.euid ||
	    (st.st_mode & 077)) {
		SFS_REAL(close)(fd);
		return CENSUS_NONE;
	}
	/* Its page allocated now (a store into a full tmpfs would fault),
	 * also by an opener that came before its maker's fallocate. Only a
	 * fallocate gives it its size: a whole size means an allocated page. */
	int rc = st.st_size >= (off_t)SEG_SIZE ? 0 : SFS_REAL(fallocate)(fd, 0, 0, SEG_SIZE);
	void *m = rc == 0 ? SFS_REAL(mmap)(NULL, SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
					   0) :
			    MAP_FAILED;
	SFS_REAL(close)(fd);
	if (m == MAP_FAILED)
		return CENSUS_BROKEN;
	seg = m;
	/* Whoever maps it first names it (an opener may come before the
	 * maker has written anything). */
	uint64_t id = 0, none = 0;
	while (!atomic_load(&seg->id) && !id)
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = 0;
	if (id)
		atomic_compare_exchange_strong(&seg->id, &none, id);
	if (maker) {
		memcpy(seg->boot_id, self.boot_id, sizeof(self.boot_id));
		seg->dir_btime = self.dir_btime;
		seg->dev = self.dev;
		seg->dir_ino = self.dir_ino;
		/* Last, released: share_area waits for it. */
		__atomic_store_n(&seg->magic, SEG_MAGIC, __ATOMIC_RELEASE);
	}
	return CENSUS_COUNTING;
}

void sfs_census_attach(void)
{
	maker = false;
	atomic_store(&state, attach());
	atomic_store(&trusted, false);
}

void sfs_census_settle(void)
{
	if (!maker || atomic_load(&state) != CENSUS_COUNTING)
		return;
	/* Others may have counted already: add, never set. */
	atomic_fetch_add(&seg->bound, count_bound());
	atomic_store_explicit(&seg->ready, 1, memory_order_release);
}

/* Whether the segment is this file system's, as this library makes it;
 * once it is, it stays so. Seen otherwise: CENSUS_UNTRUSTED. */
static bool check_identity(void)
{
	if (atomic_load_explicit(&trusted, memory_order_relaxed))
		return true;
	if (__atomic_load_n(&seg->magic, __ATOMIC_ACQUIRE) != self.magic ||
	    memcmp(seg->boot_id, self.boot_id, 16) != 0 || seg->dir_btime != self.dir_btime ||
	    seg->dev != self.dev || seg->dir_ino != self.dir_ino) {
		/* Made by something else than this library under its name. */
		atomic_store(&state, CENSUS_UNTRUSTED);
		return false;
	}
	atomic_store(&trusted, true);
	return true;
}

bool sfs_census_clear(void)
{
	if (atomic_load_explicit(&state, memory_order_relaxed) != CENSUS_COUNTING)
		return false;
	/* ready first: its maker has written the identity before it. */
	if (!atomic_load_explicit(&trusted, memory_order_relaxed) &&
	    (!atomic_load_explicit(&seg->ready, memory_order_acquire) || !check_identity()))
		return false; /* its maker is still counting (or died doing so), or not ours */
	return atomic_load_explicit(&seg->bound, memory_order_acquire) == 0;
}

void *sfs_census_share_area(bool *others_may)
{
	*others_may = true;
	switch (atomic_load_explicit(&state, memory_order_acquire)) {
	case CENSUS_NONE:
		*others_may = false; /* nobody of this user has a segment */
		return NULL;
	case CENSUS_COUNTING:
		break;
	default:
		return NULL;
	}
	/* The maker writes the identity right after it maps the segment (and
	 * before it counts, which takes longer): a moment to see it. */
	for (int i = 0; i < 1000 && !atomic_load_explicit(&seg->ready, memory_order_acquire) &&
			!__atomic_load_n(&seg->magic, __ATOMIC_ACQUIRE);
	     i++)
		sched_yield();
	return check_identity() ? (char *)seg + CENSUS_PAGE : NULL;
}

int sfs_census_enter(uint64_t *id)
{
	*id = 0;
	switch (atomic_load_explicit(&state, memory_order_relaxed)) {
	case CENSUS_COUNTING:
	case CENSUS_UNTRUSTED:
		*id = atomic_load(&seg->id);
		atomic_fetch_add(&seg->bound, 1);
		return 0;
	case CENSUS_NONE:
		return 0;
	default:
		return -ENOBUFS;
	}
}

void sfs_census_leave(uint64_t id)
{
	if (id && seg && id == atomic_load(&seg->id))
		atomic_fetch_sub(&seg->bound, 1);
}
