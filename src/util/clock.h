/* SPDX-License-Identifier: Apache-2.0 */
/* The coarse monotonic clock in nanoseconds: for retry deadlines and rate
 * limits, where a tick (a few ms) of resolution is plenty and a vDSO read
 * of the coarse clock costs a few ns. */
#ifndef SFS_UTIL_CLOCK_H
#define SFS_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t sfs_coarse_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

#endif
