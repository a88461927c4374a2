/* SPDX-License-Identifier: Apache-2.0 */
/* Guarded copies between application buffers and file mappings.
 *
 * The kernel answers a bad buffer pointer with EFAULT, and a read of a page
 * another process truncated away with a short count. A memcpy on a mapping
 * would instead raise SIGSEGV or SIGBUS and kill the host program. The library
 * therefore copies with a thread-local recovery point: a fault inside a
 * guarded copy returns -EFAULT to the caller, which then redoes the whole
 * operation through the kernel, so the application sees exactly the kernel's
 * answer. Faults outside a guarded copy go to the application's own handler
 * (recorded by the sigaction/signal wrappers) or to the default action. */
#ifndef SFS_UTIL_GUARD_H
#define SFS_UTIL_GUARD_H

#include <signal.h>
#include <stddef.h>

/* Set once the handlers are installed (read without instrumentation by
 * the sigaction wrappers, which may run inside a sanitizer's init). */
extern _Atomic int sfs_guard_installed;

/* Installs the SIGSEGV/SIGBUS handlers. Idempotent. */
void sfs_guard_install(void);

/* memcpy that returns 0, or -EFAULT when either side faulted. */
int sfs_guarded_copy(void *dst, const void *src, size_t n);

/* The same with another copy routine (sfs_pmem_copy_nodrain). */
int sfs_guarded_copy_by(void *dst, const void *src, size_t n,
			void *(*copy)(void *, const void *, size_t));

/* Whether the library owns the handler for sig (SIGSEGV or SIGBUS), so the
 * sigaction wrapper must record the application's handler instead. */
int sfs_guard_owns(int sig);

/* The application's view of the handler for a guarded signal. */
int sfs_guard_app_action(int sig, const struct sigaction *act, struct sigaction *old);

#endif
