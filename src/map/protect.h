/* SPDX-License-Identifier: Apache-2.0 */
/* Stray-write protection under SPLITFS_PROTECT=1 (KucoFS §3.3, three-phase
 * writes). The library's mappings of target files must not take a store
 * the application did not make through write(2).
 *
 * With memory protection keys (x86 PKU; pkey_alloc succeeds), every chunk
 * carries the library's key, which is write-disabled in each thread's PKRU
 * except inside the library's own copy into the file: a write opens its
 * thread's window (WRPKRU, some ns), copies, and closes it; a store by any
 * other code, on any thread, faults. PKRU is per thread and a thread's
 * rights for a key start as the kernel's default (no access) on threads
 * that predate the key and in signal handlers, so every access first makes
 * sure its thread may read.
 *
 * Without keys the chunks are mapped read-only and overwrites go through
 * the kernel (pwrite): a window made with mprotect costs two system calls
 * and a TLB flush per write, 4.7 times a pwrite on this machine (README,
 * Stray writes). */
#ifndef SFS_MAP_PROTECT_H
#define SFS_MAP_PROTECT_H

#include <stdbool.h>
#include <sys/mman.h> /* pkey_get, pkey_set: _GNU_SOURCE */

#include "../util/compiler.h"

/* The library's protection key, or -1 (no SPLITFS_PROTECT, or no keys). */
extern int sfs_pkey;

/* At start-up under SPLITFS_PROTECT: allocates the key if the CPU and
 * kernel have them. */
void sfs_protect_init(void);

/* Before a load from a keyed chunk. */
static inline void sfs_protect_may_read(void)
{
	if (sfs_unlikely(sfs_pkey >= 0) && (pkey_get(sfs_pkey) & PKEY_DISABLE_ACCESS))
		pkey_set(sfs_pkey, PKEY_DISABLE_WRITE);
}

/* Around the library's own store into a keyed chunk. */
static inline void sfs_protect_open(void)
{
	if (sfs_pkey >= 0)
		pkey_set(sfs_pkey, 0);
}

static inline void sfs_protect_close(void)
{
	if (sfs_pkey >= 0)
		pkey_set(sfs_pkey, PKEY_DISABLE_WRITE);
}

#endif
