/* SPDX-License-Identifier: Apache-2.0 */
/* Holds the library between libpmem2's load and its first map with it
 * until exit is in _dl_fini (tests/c/exit_learning.c): preloaded after
 * libsplitfs (LD_PRELOAD=libsplitfs.so:slowdlsym.so), this dlsym waits,
 * before it looks up pmem2_errormsg (the last symbol the library takes
 * from a libpmem2 it has just loaded), until this object's destructor has
 * started (at most 0.5 s). _dl_fini calls that destructor after
 * libsplitfs's and before libpmem2's (the order of the loaded objects), and
 * it waits in turn until the lookup has returned, and 2 ms more (the
 * library registers its exit handler then), before it lets _dl_fini go on
 * to libpmem2's destructor. Every other lookup is the real dlsym's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

static atomic_bool in_lookup, looked_up, finishing;

static void nap_ms(long ms)
{
	struct timespec t = {0, ms * 1000000};
	nanosleep(&t, NULL);
}

void *dlsym(void *restrict handle, const char *restrict name)
{
	static void *(*next)(void *, const char *);
	if (!next)
		next = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (handle == RTLD_NEXT || handle == RTLD_DEFAULT || strcmp(name, "pmem2_errormsg") != 0)
		return next(handle, name);
	atomic_store(&in_lookup, true);
	for (int i = 0; i < 500 && !atomic_load(&finishing); i++)
		nap_ms(1);
	void *p = next(handle, name);
	atomic_store(&looked_up, true);
	return p;
}

__attribute__((destructor)) static void at_fini(void)
{
	atomic_store(&finishing, true);
	if (!atomic_load(&in_lookup))
		return;
	for (int i = 0; i < 1000 && !atomic_load(&looked_up); i++)
		nap_ms(1);
	nap_ms(2);
}
