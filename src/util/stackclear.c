/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "stackclear.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "../sys/real.h"
#include "../sys/self.h"

#define CLEARED (24u << 10)

/* Whether the calling thread's stack has CLEARED bytes and a margin below
 * here. The main thread's grows on demand to RLIMIT_STACK (8 MiB here),
 * and pthread_getattr_np of it reads /proc/self/maps: it is not asked. */
static bool room_below(void)
{
	if ((pid_t)SFS_REAL(syscall)(SYS_gettid) == sfs_self_pid())
		return true;
	pthread_attr_t attr;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return false;
	void *lo;
	size_t size;
	bool known = pthread_attr_getstack(&attr, &lo, &size) == 0;
	pthread_attr_destroy(&attr);
	char here;
	return known && (uintptr_t)&here > (uintptr_t)lo &&
	       (uintptr_t)&here - (uintptr_t)lo > CLEARED + 4096;
}

#define PAGE 4096u

/* How many of the CLEARED bytes below top the start can have written. Its
 * pages run down from the caller's frame, in memory; a page below them was
 * never touched since the stack grew (zero, or what the program itself left
 * there), and a store to it would cost a fault (24 KiB cleared whole: two
 * or three of them, 8 us a start). So mincore says which are resident and
 * the count stops at the first that is not; where the range goes below the
 * stack's mapping (the main thread's grows on demand: ENOMEM), that part
 * was never touched either. */
static size_t used_below(uintptr_t top)
{
	uintptr_t lo = (top - CLEARED) & ~(uintptr_t)(PAGE - 1);
	unsigned char vec[CLEARED / PAGE + 2];
	static_assert(sizeof(vec) >= (CLEARED + 2 * PAGE - 1) / PAGE, "one byte per page");
	while (lo < top && mincore((void *)lo, top - lo, vec) != 0) {
		if (errno != ENOMEM)
			return CLEARED;
		lo += PAGE;
	}
	size_t pages = (top - lo + PAGE - 1) / PAGE, used = 0;
	while (used < pages && (vec[pages - 1 - used] & 1))
		used++;
	uintptr_t from = lo + (pages - used) * PAGE;
	return top - from < CLEARED ? top - from : CLEARED;
}

/* Zeroes the n bytes below the caller's frame: its own frame, and no call
 * from it, whose frame would go below (onto a page never touched). */
__attribute__((noinline)) static void clear(size_t n)
{
	uint64_t below[n / sizeof(uint64_t) + 1];
	volatile uint64_t *word = below; /* stores the compiler keeps */
	for (size_t i = 0; i < n / sizeof(uint64_t) + 1; i++)
		word[i] = 0;
}

void sfs_clear_stack_below(void)
{
	int saved = errno; /* the program's call it runs in may succeed */
	char here;
	if (room_below())
		clear(used_below((uintptr_t)&here));
	errno = saved;
}
