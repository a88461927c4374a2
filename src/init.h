/* SPDX-License-Identifier: Apache-2.0 */
/* Start-up and exit. The process-wide state is sfs_g (sys/global.h). */
#ifndef SFS_INIT_H
#define SFS_INIT_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sys/global.h"

/* 0: not started, 1: running, 2: done. Wrappers call sfs_init() first; it
 * returns at once after the first call. While init runs on this thread, the
 * library is inactive and every wrapper passes straight through. */
extern atomic_int sfs_init_state;
void sfs_init_slow(void);

static inline void sfs_init(void)
{
	if (__builtin_expect(atomic_load_explicit(&sfs_init_state, memory_order_acquire) != 2, 0))
		sfs_init_slow();
}

/* Whether init has finished, without starting it: for wrappers a memory
 * allocator calls while holding its own locks (mmap, syscall), where init,
 * which allocates, would deadlock. Before init no descriptor is managed. */
static inline bool sfs_initialized(void)
{
	return atomic_load_explicit(&sfs_init_state, memory_order_acquire) == 2;
}

/* The start on the managed file system, which init puts off in POSIX
 * mode (init.c): a wrapper of a call that names a path calls sfs_wake()
 * where others call sfs_init(). sfs_dormant(): still put off. */
enum { SFS_WAKE_DONE, SFS_WAKE_DORMANT, SFS_WAKE_RUNNING, SFS_WAKE_OFF };
extern atomic_int sfs_wake_state;
void sfs_wake_slow(void);
bool sfs_dormant(void);

static inline void sfs_wake(void)
{
	sfs_init();
	int st = atomic_load_explicit(&sfs_wake_state, memory_order_acquire);
	if (__builtin_expect(st != SFS_WAKE_DONE, 0))
		sfs_wake_slow();
}

/* True when the library manages files at all (after init), and this is
 * not a vfork child (sys/global.h). */
static inline bool sfs_active(void)
{
	sfs_init();
	return sfs_live();
}

/* sfs_active for a call that names a path. */
static inline bool sfs_active_path(void)
{
	sfs_wake();
	return sfs_live();
}

#endif
