/* SPDX-License-Identifier: Apache-2.0 */
/* The on-media layout of a staging store: a file in <root>/.splitfs whose
 * first 4 KiB are this header.
 *
 *   ring  data after the header, at SFS_STORE_HDR + (off mod cap)
 *   file  data in a second file, at the target's own offsets (what
 *         exchange-range and clone need), linked as <name>.data
 *
 * While a window is open the store is linked as stage.<uid>.<dev>.<ino>
 * (bound), so that it outlives its process: a write() that returned has put
 * its bytes into the store's page cache, as the kernel would have put them
 * into the file's, and the header says where they belong. The owner writes
 * the header with plain stores through its mapping, ordered so that any
 * moment's state is consistent: the window's target fields and `base`
 * before `state` turns OPEN, an append's bytes before `size` covers them.
 * A live owner holds an flock on the store; a store nobody holds is
 * adopted (adopt.h) by the next library process that opens the file, by a
 * library process that starts, or by `splitfs recover`, and only on the
 * same mount of the file system (mnt_id, boot_id): after a crash a store's
 * page cache may be lost or half written back, and POSIX mode promises
 * nothing for data that was not fsynced. */
#ifndef SFS_STAGING_FORMAT_H
#define SFS_STAGING_FORMAT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../util/compiler.h"

#define SFS_STORE_MAGIC 0x3145524f54534653ull /* "SFSTORE1" */
#define SFS_STORE_HDR 4096
#define SFS_STORE_MAX_CAP (1ull << 30) /* the largest ring recovery accepts */

enum sfs_store_layout { SFS_STORE_RING = 1, SFS_STORE_FILE = 2 };
enum sfs_store_state { SFS_STORE_EMPTY = 0, SFS_STORE_OPEN = 1 };

struct sfs_store_hdr {
	uint64_t magic;
	uint32_t version;    /* 1 */
	uint32_t layout;     /* enum sfs_store_layout */
	uint64_t cap;	     /* ring: bytes of data; file: 0 */
	uint8_t boot_id[16]; /* the boot and the mount the window was */
	uint64_t mnt_id;     /* written on (see above) */
	uint64_t dev;	     /* the target: st_dev, st_ino, i_generation */
	uint64_t ino;
	uint32_t igen;
	uint32_t pid;		/* the owner (for messages only) */
	_Atomic uint32_t state; /* enum sfs_store_state */
	uint32_t handle_bytes;	/* the target's file handle (0: none) */
	int32_t handle_type;
	/* Nonzero from a relink's first write into the target until the
	 * window is emptied: only then is a target size between base and size
	 * the relink's own (a kill in the middle of it); otherwise another
	 * process changed the file, and recovery keeps the window apart. */
	_Atomic uint32_t relinking;
	uint64_t base;	       /* the target's size when the window opened */
	_Atomic uint64_t size; /* the window's bytes are [base, size) */
	uint64_t census;       /* the census counting its name (census.h), or 0 */
	uint64_t seq;	       /* windows opened on this store */
	unsigned char handle[128];
	char path[3848]; /* the target's path at the window's opening */
};
static_assert(sizeof(struct sfs_store_hdr) == SFS_STORE_HDR, "the header is one 4 KiB page");
static_assert(offsetof(struct sfs_store_hdr, state) == 72, "store header layout");
static_assert(offsetof(struct sfs_store_hdr, relinking) == 84, "store header layout");
static_assert(offsetof(struct sfs_store_hdr, base) == 88, "store header layout");
static_assert(offsetof(struct sfs_store_hdr, size) == 96, "store header layout");
static_assert(offsetof(struct sfs_store_hdr, handle) == 120, "store header layout");
static_assert(offsetof(struct sfs_store_hdr, path) == 248, "store header layout");

/* Where file offset off of a window lives in the store's data (the ring
 * file, or the .data file), and how many bytes are contiguous there. */
static inline uint64_t sfs_store_pos(uint32_t layout, uint64_t cap, uint64_t off, uint64_t *contig)
{
	if (layout == SFS_STORE_RING) {
		uint64_t in_ring = off & (cap - 1);
		*contig = cap - in_ring;
		return SFS_STORE_HDR + in_ring;
	}
	*contig = UINT64_MAX - off;
	return off;
}

/* The suffix of a file store's data file name. */
#define SFS_STORE_DATA ".data"

/* Whether a name in .splitfs is a file store's data file: not a store of
 * its own, it goes with the header of the same name without the suffix. */
static inline bool sfs_store_is_data(const char *name)
{
	size_t len = strlen(name), dl = sizeof(SFS_STORE_DATA) - 1;
	return len > dl && strcmp(name + len - dl, SFS_STORE_DATA) == 0;
}

#endif
