/* SPDX-License-Identifier: Apache-2.0 */
/* A slow kernel for close(2), for tests that need a race's window held
 * open: preloaded after libsplitfs (LD_PRELOAD=libsplitfs.so:slowclose.so),
 * it is the "real" close the library calls, and it sleeps
 * SFS_SHIM_CLOSE_US microseconds (default 3000) before each close made by
 * a thread other than the main one (the library's background thread),
 * with the descriptor still open. The application's own closes come
 * through the library first and are delayed only in other threads too. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int close(int fd)
{
	static int (*next)(int);
	static long delay_us = -1;
	if (!next)
		next = (int (*)(int))dlsym(RTLD_NEXT, "close");
	if (delay_us < 0) {
		const char *s = getenv("SFS_SHIM_CLOSE_US");
		delay_us = s ? atol(s) : 3000;
	}
	if (delay_us > 0 && syscall(SYS_gettid) != getpid()) {
		struct timespec t = {delay_us / 1000000, (delay_us % 1000000) * 1000};
		nanosleep(&t, NULL);
	}
	return next(fd);
}
