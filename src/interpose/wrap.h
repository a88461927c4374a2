/* SPDX-License-Identifier: Apache-2.0 */
/* What every wrapper needs. A wrapper decides "ours or pass through", calls
 * the fs layer, converts -errno to errno, and holds no policy. */
#ifndef SFS_INTERPOSE_WRAP_H
#define SFS_INTERPOSE_WRAP_H

#include <dlfcn.h>
#include <errno.h>

#include "../fs/fdtable.h"
#include "../fs/file.h"
#include "../fs/fileops.h"
#include "../fs/forkwatch.h"
#include "../fs/inode.h"
#include "../fs/kpos.h"
#include "../fs/metasync.h"
#include "../fs/share.h"
#include "../init.h"
#include "../util/compiler.h"
#include "../util/signals.h"
#include "../util/stats.h"
#include "../sys/real.h"
#include "../fs/dax.h"

/* The 64-bit twins of x86-64 glibc (pread64, lseek64, fstat64, ...) are
 * the same functions as their plain names there: off_t is off64_t, and
 * struct stat, struct rlimit have the layout of their 64 forms (glibc
 * itself exports one function under both names). So a twin is exported as
 * a second name of the plain wrapper, with the type glibc declares for it,
 * and its pass-through goes to SFS_REAL(<plain name>), which is libc's same
 * function. A 32-bit build would need the twins written out again. */
_Static_assert(sizeof(off_t) == 8, "64-bit twins are aliases only where off_t is 64-bit");
#define SFS_ALIAS(name, twin) SFS_EXPORT extern __typeof(name) name __attribute__((alias(#twin)))

/* A count or -errno, in the libc convention (-1 and errno). */
static inline long sfs_ret(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* The library's own descriptors do not exist for the application: a call
 * on one answers EBADF, as it would without the library. */
#define SFS_HIDE_INTERNAL(fd, fail)                                                                \
	do {                                                                                       \
		if (sfs_unlikely(sfs_fd_is_internal(fd))) {                                        \
			errno = EBADF;                                                             \
			return fail;                                                               \
		}                                                                                  \
	} while (0)

/* SFS_HIDE_INTERNAL for a read or write, once sfs_wrap_data found no
 * managed file there: the library's own descriptors are never managed (nor
 * pending), so the managed path pays nothing for the check. */
#define SFS_HIDE_UNMANAGED(fd, pending, fail)                                                      \
	do {                                                                                       \
		if (!(pending))                                                                    \
			SFS_HIDE_INTERNAL(fd, fail);                                               \
	} while (0)

/* The managed file at fd, with a reference, or NULL: pass through. A
 * managed call is one critical section (util/signals.h), from here to
 * sfs_wrap_put: an application's handler that interrupts it runs after it,
 * as a handler never runs inside the kernel's write. Without it, a handler
 * that writes could enter the library between two of its steps (an append's
 * offset and its copy) or inside a malloc the call made. */
static inline struct sfs_file *sfs_wrap_file(int fd)
{
	if (!sfs_active())
		return NULL;
	sfs_busy_enter();
	struct sfs_file *f = sfs_fd_get(fd);
	if (!f && sfs_unlikely(atomic_load_explicit(&sfs_forkwatch_active, memory_order_relaxed)))
		f = sfs_forkwatch_take_back(fd);
	if (!f)
		sfs_busy_exit();
	return f;
}

/* sfs_wrap_file for the reads and writes: a pending descriptor
 * (fs/fdtable.h) is read and written through the kernel its first few
 * times, then managed. *pending: the caller makes the call through the
 * kernel, then calls sfs_wrap_pending_done. */
static inline struct sfs_file *sfs_wrap_data(int fd, bool write, bool *pending)
{
	*pending = false;
	struct sfs_file *f = sfs_wrap_file(fd);
	if (f || !sfs_active())
		return f;
	/* A second look: another thread's call may have promoted it since
	 * the first, and then this call is the library's too. */
	enum sfs_fd_kind kind = sfs_fd_kind(fd);
	if (sfs_likely(kind == SFS_FD_KIND_KERNEL))
		return NULL;
	if (kind == SFS_FD_KIND_MANAGED)
		return sfs_wrap_file(fd);
	/* A critical section: a handler that reads the descriptor must not
	 * wait for a promotion it interrupted. */
	sfs_busy_enter();
	/* A pending call goes to the kernel only while no library process
	 * stores into its file (fs/share.h): otherwise it is managed, and
	 * orders itself with those stores. */
	int go = sfs_share_raw_begin();
	if (go == SFS_RAW_ASK)
		go = sfs_pending_may_go(fd) ? SFS_RAW_GO : SFS_RAW_NO;
	bool raw = go == SFS_RAW_GO;
	enum sfs_pending_step step = sfs_fd_pending_begin(fd, !raw);
	if (step == SFS_PENDING_PROMOTE)
		sfs_manage_pending(fd);
	if (raw && step != SFS_PENDING_KERNEL)
		sfs_share_raw_end();
	sfs_busy_exit();
	if (step == SFS_PENDING_KERNEL) {
		*pending = true;
		sfs_stat_event(write ? SFS_EV_pending_writes : SFS_EV_pending_reads, 1);
		return NULL;
	}
	/* Managed now, perhaps by another thread since the first look. */
	return sfs_wrap_file(fd);
}

/* A kernel call sfs_wrap_data let through has returned r. */
static inline long sfs_wrap_pending_done(int fd, bool pending, long r)
{
	if (pending) {
		sfs_fd_pending_end(fd);
		sfs_share_raw_end();
	}
	return r;
}

/* Releases a file sfs_wrap_file returned, and ends its critical section. */
static inline void sfs_wrap_put(struct sfs_file *f)
{
	sfs_file_put(f);
	sfs_busy_exit();
}

/* Ends a managed call: releases the file, counts it, converts the result. */
static inline long sfs_wrap_done(struct sfs_file *f, enum sfs_call c, uint64_t t0, long r)
{
	sfs_wrap_put(f);
	sfs_stat_call_end(c, t0, r > 0 ? (uint64_t)r : 0, false);
	return sfs_ret(r);
}

/* A vfork child's write (r bytes) through fd, in sync and strict modes:
 * the parent's marks cover what it inherited, so a file of the managed file
 * system it opened itself is synced here (interpose/vfork.c). */
long sfs_vfork_child_wrote(int fd, long r);

/* After the kernel wrote through fd (result r): in sync and strict modes a
 * descriptor of a file left to the kernel (SFS_FD_DSYNC) has its data made
 * durable before the call returns. A mark on a number the kernel reused for
 * something that cannot be synced (closed where no wrapper saw it) goes,
 * except in a vfork child, where the table is the parent's. */
static inline long sfs_kernel_wrote(int fd, long r)
{
	if (sfs_likely(r < 0 || !sfs_fd_is_dsync(fd))) {
		if (sfs_likely(!sfs_vfork_child) || r < 0)
			return r;
		return sfs_vfork_child_wrote(fd, r);
	}
	int saved = errno;
	if (SFS_REAL(fdatasync)(fd) == 0)
		return r;
	if (errno == EINVAL || errno == EBADF || errno == EROFS) {
		if (!sfs_vfork_child)
			sfs_fd_set_dsync(fd, false);
		errno = saved;
		return r;
	}
	return -1; /* the data may not be durable: say so, as O_DSYNC would */
}

/* After a metadata call the kernel served with result r (0 or -1): in sync
 * and strict modes, sync_call (an sfs_metasync_* call) makes the change
 * durable before the call returns; if it cannot, the call fails with its
 * error, as the change may not survive a crash. */
#define SFS_META_DURABLE(r, sync_call)                                                             \
	do {                                                                                       \
		if ((r) == 0)                                                                      \
			sfs_meta_changed();                                                        \
		if ((r) == 0 && sfs_unlikely(sfs_metasync_on())) {                                 \
			int rc_ = (sync_call);                                                     \
			if (rc_ < 0) {                                                             \
				errno = -rc_;                                                      \
				(r) = -1;                                                          \
			}                                                                          \
		}                                                                                  \
	} while (0)

/* expr, a call that uses f's offset through fd, between a pull of the
 * offset from the kernel's open file and a push back, when the offset
 * lives there (fs/kpos.h). */
#define SFS_AT_KPOS(f, fd, expr)                                                                   \
	({                                                                                         \
		bool kp_ = sfs_file_kpos_pull((f), (fd));                                          \
		long kr_ = (expr);                                                                 \
		if (kp_)                                                                           \
			sfs_file_kpos_push((f), (fd));                                             \
		kr_;                                                                               \
	})

/* Ends a managed call: SFS_E_KERNEL means the file was just left to the
 * kernel (another process opened it), so the call is made there. */
#define SFS_FINISH(f, call_id, t0, result, kernel_call)                                            \
	do {                                                                                       \
		long r_ = (result);                                                                \
		if (r_ == SFS_E_KERNEL) {                                                          \
			sfs_wrap_put(f);                                                           \
			return kernel_call;                                                        \
		}                                                                                  \
		return sfs_wrap_done(f, call_id, t0, r_);                                          \
	} while (0)

/* libc's function for a wrapper that may run before the library's init
 * (see SFS_NO_SANITIZE), resolved into *cache on first use. */
SFS_NO_SANITIZE static inline void *sfs_early_next(const char *name, void **cache)
{
	void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, p, __ATOMIC_RELEASE);
	}
	return p;
}

#endif
