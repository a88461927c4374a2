/* SPDX-License-Identifier: Apache-2.0 */
/* The errno differential's shared parts (tests/c/errno_diff.c): its
 * fixtures, its output helpers and the groups of probes, one file each in
 * this folder. main() runs the groups in a fixed order, so two runs print
 * the same lines in the same order. */
#ifndef SFS_ERRNO_DIFF_PROBES_H
#define SFS_ERRNO_DIFF_PROBES_H

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utime.h>

#include "../helpers.h"

extern char **environ;

#define PG 4096L
#define KADDR ((void *)0xffffffffff600000UL) /* the vsyscall page: kernel space */
#define USEREND ((void *)0x7ffffffff000UL)   /* the end of user space */
#define HUGEFD 0x7fffff00
#define CLOSEDFD                                                                                   \
	200 /* never the lowest free number: that one races with the
		      * library opening its own descriptors */
#define RWF_UNKNOWN (1 << 30)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The fixtures (setup in errno_diff.c). */
extern char *p_file;
extern int ro, wo, rw, app, opath, dfd, duprw, dupro, aux_ro, aux_wo, aux_rw, aux_app, outfd;
extern char buf[1 << 16], data[256];
extern char *rdonly_page, *straddle, *hole;
extern char *deferred; /* while set, lines collect here (RLIMIT_FSIZE probes) */

/* Output: one line per probe, "<name> ret=<r> errno=<name|0>". */
void out(const char *name, long ret, int err);
/* A probe name, formatted into a static buffer. */
const char *nm(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void out_en(const char *name, int r);
/* mmap: 0 for a mapping (unmapped again at once), -1 and errno. */
void pmap(const char *name, size_t len, int prot, int flags, int fd, off_t off);
/* Hides a value from the compiler (no -Wnonnull, no object-size checks). */
void *hide(const void *p);
off_t fsize(int fd);
long fnv(const unsigned char *p, long n);
/* Size and checksum of a file as the application sees it (through fd). */
void summary(const char *tag, int fd);
int xopen(const char *p, int flags);
/* Appends 64 bytes through the O_APPEND descriptor (errno_diff.c). */
off_t restage(void);

/* A call that fails with a negative result and errno. The name is made
 * before the call, errno read right after it. */
#define PR(name, call)                                                                             \
	do {                                                                                       \
		const char *n_ = (name);                                                           \
		long r_ = (errno = 0, (long)(call));                                               \
		out(n_, r_, r_ < 0 ? errno : 0);                                                   \
	} while (0)
/* A call that returns a new descriptor: printed as 1, and closed. */
#define PFD(name, call)                                                                            \
	do {                                                                                       \
		const char *n_ = (name);                                                           \
		int r_ = (errno = 0, (call)), e_ = errno;                                          \
		out(n_, r_ >= 0 ? 1 : -1, r_ >= 0 ? 0 : e_);                                       \
		close(r_);                                                                         \
	} while (0)
#define PEN(name, call) out_en((name), (call))

/* The groups of probes, in the order main() runs them. data.c: */
void bad_buffers(void);
void iovecs(void);
void offsets(void);
void rwf_flags(void);
void fd_matrix(const char *k, int fd);
/* names.c: */
void descriptors(void);
void paths(void);
void timestamps(void);
/* other.c: */
void maps(void);
void transfers(void);
void misc(void);
void hazards(void);

#endif
