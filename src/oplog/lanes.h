/* SPDX-License-Identifier: Apache-2.0 */
/* The files of a process's log set (format.h): the main log, lane 0, and the
 * lanes opened while several threads write records at once. Internal to
 * oplog/: oplog.c owns the set's generation and records, this the files.
 *
 * A thread writes its record into the lane it used last if no other thread
 * is writing there, else into one where none is, else into a new lane (up
 * to SFS_LOG_LANES, none once the application has met RLIMIT_NOFILE), else
 * shares: the kernel's synchronous writes into one
 * file do not overlap, into several they do
 * (bench/results/2026-11-27-logscale-device). */
#ifndef SFS_OPLOG_LANES_H
#define SFS_OPLOG_LANES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../util/pmem.h"
#include "format.h"

struct sfs_lane {
	int fd;			  /* internal fd, flock'ed */
	struct sfs_pmem_map pm;	  /* on DAX: mapped, written with stores */
	_Atomic uint64_t tail;	  /* next free byte */
	_Atomic uint32_t writers; /* threads writing a record into it now (a hint) */
	char name[80];		  /* its name in <root>/.splitfs */
} __attribute__((aligned(64)));

/* What a lane opened now must say in its header. */
struct sfs_lane_set {
	uint64_t nonce, gen, size;
};

/* The main log (lane 0); its fd is -1 while the set has none. */
struct sfs_lane *sfs_lane_main(void);

/* Makes the main log, open at fd (internal, locked, mapped on DAX into pm)
 * and named name, lane 0 of a new set: the only lane, empty. */
void sfs_lanes_start(int fd, const struct sfs_pmem_map *pm, const char *name);

/* The lane for this thread's next record, counted in its writers (the
 * caller takes itself off once the record is written). A new lane says
 * what set tells it in its header. */
struct sfs_lane *sfs_lane_pick(const struct sfs_lane_set *set);

/* The lanes open now (lanes[0..n), lane 0 the main log); *n set. */
struct sfs_lane *sfs_lanes_open(unsigned *n);

/* Every lane empty again (a checkpoint, after the new generation). */
void sfs_lanes_rewind(void);

/* Process end: the lanes, then the main log, closed; with dirfd >= 0 (an
 * O_RDONLY descriptor of .splitfs; the set's records are dead) given back
 * for reuse first, lanes before the main log, whose name recovery finds a
 * set by. */
void sfs_lanes_close(int dirfd);

/* A forked child: the parent's files are not its own. */
void sfs_lanes_reset_child(void);

#endif
