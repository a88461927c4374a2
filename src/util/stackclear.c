/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "stackclear.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
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

/* Its own frame is the CLEARED bytes below the caller's. */
__attribute__((noinline)) static void clear(void)
{
	char below[CLEARED];
	explicit_bzero(below, sizeof(below)); /* a memset the compiler keeps */
}

void sfs_clear_stack_below(void)
{
	if (room_below())
		clear();
}
