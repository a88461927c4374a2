/* SPDX-License-Identifier: Apache-2.0 */
/* The census of bound stores: how many stores this user's library
 * processes have linked by a target's name (stage.<uid>.<dev>.<ino>,
 * stage.h) on this file system. Every open of a file a process has no inode of
 * looks that name up, for the appends of a process that died
 * (sfs_adopt_for_open): a system call per open, for a name that is almost
 * never there. While the census says none is bound, the lookup is skipped.
 *
 * One counter in a segment in /dev/shm per user and file system (mode
 * 0600; used only if its owner, mode and identity check). It errs high,
 * never low:
 *  - a process adds one before it links a store by a target's name, and
 *    takes that one away after it removed the name itself (relinked, given
 *    back). A store left bound (its process killed, a window abandoned)
 *    keeps its count until a process of the user removes the name
 *    (adopts it, discards it, keeps it as orphan.*: adopt.c), which takes
 *    the count away if the store's header names this census (a random id);
 *  - the process that makes the segment counts the names still bound in
 *    .splitfs after its start's adoption; until then, nobody skips;
 *  - a process that cannot count (it could not map a segment that others
 *    may use) binds no store: its appends go to the kernel.
 * Not counted: the stores of a library that predates the census, and those
 * of processes still using a segment someone removed. */
#ifndef SFS_STAGING_CENSUS_H
#define SFS_STAGING_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../util/decname.h"

/* The segment of a file system instance, in /dev/shm:
 * SFS_CENSUS_PREFIX <uid> then the suffix below: its device, and the
 * inode number and birth time of its .splitfs (a file system made again on
 * the same device has another), so that a remount keeps its census and
 * `splitfs image down` can remove it. */
#define SFS_CENSUS_PREFIX "splitfs-census."

/* The birth time in that name, from a statx of .splitfs that asked for
 * STATX_BTIME: 0 where the file system keeps none. */
static inline uint64_t sfs_census_btime_ns(const struct statx *stx)
{
	return stx->stx_mask & STATX_BTIME ?
		       (uint64_t)stx->stx_btime.tv_sec * 1000000000u + stx->stx_btime.tv_nsec :
		       0;
}

static inline size_t sfs_census_suffix(char *buf, size_t n, uint64_t dev, uint64_t dir_ino,
				       uint64_t dir_btime_ns)
{
	return sfs_decname(buf, n, ".", (const uint64_t[]){dev, dir_ino, dir_btime_ns}, 3);
}

/* Opens or makes this user's segment for the file system (after
 * setup_root, before the start's adoption of dead stores, which takes
 * their counts away). */
void sfs_census_attach(void);

/* After that adoption: the process that made the segment counts the names
 * still bound, and the census is ready. */
void sfs_census_settle(void);

/* True when no store of this user's is bound on the file system: the lookup of
 * a dead process's store for a file may be skipped. */
bool sfs_census_clear(void);

/* Before a store is linked by a target's name: 0, with *id the census
 * that counted it (written into the store's header, for its adopter), or
 * 0 when there is no census for anyone of this user (nobody
 * skips a lookup); or -ENOBUFS (the process cannot count: the store must
 * not be bound). */
int sfs_census_enter(uint64_t *id);

/* The segment also holds what the user's library processes share files by
 * (fs/share.h): this many bytes after the census's own page, zeros when the
 * segment is made. */
#define SFS_CENSUS_SHARE_BYTES (132 << 10)

/* That area, or NULL: then *others_may says whether other processes of the
 * user may use it (this process could not map the segment, or found it
 * made by something else) or nobody can (no segment for anyone). */
void *sfs_census_share_area(bool *others_may);

/* A name that the census id counted is gone (id 0, or another census's:
 * nothing). Async-signal-safe. */
void sfs_census_leave(uint64_t id);

#endif
