/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "fileops.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/real.h"
#include "../sys/statq.h"
#include "../util/compiler.h"
#include "../util/guard.h"
#include "data.h"
#include "fdtable.h"
#include "flush.h"
#include "inode.h"
#include "logsync.h"
#include "kpos.h"
#include "lease.h"
#include "process.h"
#include "../oplog/oplog.h"
#include "../staging/adopt.h"
#include "../staging/census.h"
#include "../util/signals.h"
#include "../util/stats.h"
#include "logged.h"
#include "read.h"
#include "share.h"

#ifndef RWF_NOAPPEND
#define RWF_NOAPPEND 0x00000020
#endif

/* x86-64 user address space end (TASK_SIZE_MAX with 4-level paging). */
#define USER_END 0x00007ffffffff000ULL

bool sfs_user_range_ok(const void *buf, size_t n)
{
	uintptr_t p = (uintptr_t)buf;
	return p + n >= p && p + n <= USER_END;
}

/* How a descriptor comes to manage(). */
enum manage_how {
	MANAGE_OPEN,	/* just opened by the application: may be left pending */
	MANAGE_AT,	/* opened earlier (forkwatch.h, size.c) */
	MANAGE_PROMOTE, /* pending until now: its open adopted a dead process's stores */
};

static void manage(int fd, int flags, int cloexec, int64_t pos, enum manage_how how);

/* Manages a pending descriptor (fdtable.h) that sfs_fd_pending_begin or
 * promote_pending_of let this caller promote, at the open file's offset. */
static void promote(int fd)
{
	int fl = SFS_REAL(fcntl)(fd, F_GETFL);
	off_t pos = fl < 0 ? -1 : SFS_REAL(lseek)(fd, 0, SEEK_CUR);
	if (pos >= 0)
		manage(fd, fl, -1, pos, MANAGE_PROMOTE);
	sfs_fd_promoted(fd);
	sfs_stat_event(SFS_EV_pending_promoted, 1);
}

void sfs_manage_pending(int fd)
{
	int saved = errno;
	promote(fd);
	errno = saved;
}

bool sfs_pending_may_go(int fd)
{
	dev_t dev;
	ino_t ino;
	if (!sfs_fd_pending_id(fd, &dev, &ino)) {
		struct stat st;
		if (sfs_fstat_quiet(fd, &st) != 0)
			return true; /* the kernel's call answers (EBADF) */
		dev = S_ISREG(st.st_mode) ? st.st_dev : (dev_t)-1; /* nobody stores into it */
		ino = st.st_ino;
		sfs_fd_pending_identify(fd, dev, ino);
	}
	return dev != sfs_g.root_dev || sfs_share_raw_file(dev, ino);
}

struct same_file {
	dev_t dev;
	ino_t ino;
	int except;
};

static bool promote_if_same(int fd, void *arg)
{
	const struct same_file *want = arg;
	struct stat st;
	if (fd == want->except || !sfs_fd_pending_may_be(fd, want->dev, want->ino) ||
	    sfs_fstat_quiet(fd, &st) != 0)
		return true;
	sfs_fd_pending_identify(fd, st.st_dev, st.st_ino); /* one fstat per descriptor */
	if (st.st_dev == want->dev && st.st_ino == want->ino && sfs_fd_pending_claim(fd))
		promote(fd);
	return true;
}

/* Before the first inode of (dev, ino) in the process: its pending
 * descriptors are managed first, so that they share the inode's open file
 * as every other reader does (the kernel grants no write lease while
 * another open file of the file is open). */
static void promote_pending_of(dev_t dev, ino_t ino, int except)
{
	struct same_file want = {dev, ino, except};
	sfs_fd_foreach_pending(promote_if_same, &want);
}

/* Whether an open with these flags may leave its descriptor pending
 * (fdtable.h). A read-only one, in every mode. One that may write, in POSIX
 * mode only: its kernel writes are the kernel's, as a process without the
 * library would make them (in sync and strict modes a write must be durable
 * when it returns: their files left to the kernel carry SFS_FD_DSYNC). The
 * writes of a pending descriptor change the file behind any inode of it,
 * as another process's would; none is leased meanwhile, since its open
 * file keeps the kernel from granting a lease (fs/lease.h), and a new inode
 * of the file promotes it first (promote_pending_of). */
static bool may_pend(int flags)
{
	if ((flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC)))
		return true;
	return !sfs_oplog_on();
}

/* sfs_manage_at, knowing whether fd is close-on-exec (cloexec 0 or 1) or
 * not (-1). */
static void manage(int fd, int flags, int cloexec, int64_t pos, enum manage_how how)
{
	if (fd < 0 || (flags & O_PATH) || !sfs_live())
		return;
	int saved = errno;
	/* O_DIRECTORY without O_TMPFILE's own bit opened a directory (a
	 * directory walk: rsync, find, git): nothing to manage, nothing to
	 * ask of it. */
	if ((flags & O_TMPFILE) == O_DIRECTORY) {
		sfs_fd_forget_mark(fd); /* a number reused behind our back */
		goto out;
	}
	/* O_DIRECT needs the kernel's own I/O path; so do O_SYNC/O_DSYNC in
	 * POSIX mode (in sync and strict modes every write is synchronous). */
	bool kernel_only = (flags & O_DIRECT) ||
			   ((flags & O_DSYNC) && sfs_g.opt.mode == SFS_MODE_POSIX) ||
			   atomic_load_explicit(&sfs_g.fd_pressure, memory_order_relaxed);
	bool created = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	/* An open that needs nothing of its file: pending, and what the file
	 * is (on which file system) asked only if it is ever promoted. That
	 * is a file just made (no inode can be of it), or any file while the
	 * process has no inode and no dead process's stores can be bound
	 * (then nothing is looked up below), or a read-only open while none
	 * can be bound. An inode this process has of that file would serve
	 * it little better: the inode's lease went with its last descriptor
	 * (inode.c), and until it is leased again (LEASE_AFTER operations,
	 * as many as a pending descriptor makes before its promotion finds
	 * the inode) it reads through the kernel too. A write lease it holds
	 * for a descriptor still open, this open broke (the staged bytes are
	 * in the file); a read lease means that nobody writes the file. */
	bool read_only = (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC));
	bool unseen = created || ((read_only || !sfs_inode_any()) && sfs_census_clear());
	if (unseen && how == MANAGE_OPEN && may_pend(flags) && !kernel_only) {
		sfs_fd_set_pending_new(fd); /* whatever the slot held goes */
		sfs_stat_event(SFS_EV_pending_opens, 1);
		goto out;
	}
	/* A mark the number kept when it was closed behind our back (not
	 * through the library): every path below that sets no entry. */
	sfs_fd_forget_mark(fd);
	struct stat st;
	if (sfs_fstat_quiet(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != sfs_g.root_dev)
		goto out;
	/* Left to the kernel, this open is a second open file of the inode:
	 * an inode this process has stays unleased (kernel path) meanwhile. */
	bool shared = false;
	/* A writer's open of a file whose inode the process only keeps
	 * cached (none of its descriptors open): the inode goes first, and
	 * the open is as a new file's. Reused, the inode would give this open
	 * its own open file (sfs_openfile_replace), at the position its last
	 * writer left and without O_APPEND, and a write the library does not
	 * see (a shell's builtin printf after `> f`, through stdio's internal
	 * write) would land there, not at 0 or at the end. A closed writable
	 * inode is evicted soon anyway (inode.c). */
	if (!created && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)))
		sfs_inode_forget(st.st_dev, st.st_ino);
	/* A process of this user's that died with appends staged for the file
	 * left them in a store: they go in before anyone here reads it. A file
	 * this open made (O_CREAT|O_EXCL) has none: a store by its name is a
	 * former file's, which staging puts aside when it binds its own. A
	 * pending descriptor's open adopted them; none came since (its open
	 * file keeps any other process from leasing the file). None is
	 * bound anywhere while the census says so (staging/census.h). */
	struct sfs_inode *known = created ? NULL : sfs_inode_find(st.st_dev, st.st_ino);
	if (known)
		sfs_inode_put(known);
	else if (!created && how != MANAGE_PROMOTE && !sfs_census_clear() &&
		 sfs_adopt_for_open(fd, st.st_dev, st.st_ino, (flags & O_TRUNC) != 0) &&
		 sfs_fstat_quiet(fd, &st) != 0)
		goto out;
	if (!known && !kernel_only) {
		/* A file this process has no inode of: pending until its reads
		 * and writes show it is worth an inode. */
		if (how == MANAGE_OPEN && may_pend(flags)) {
			sfs_fd_set_pending(fd, st.st_dev, st.st_ino);
			sfs_stat_event(SFS_EV_pending_opens, 1);
			goto out;
		}
		if (sfs_unlikely(sfs_fd_any_pending()))
			promote_pending_of(st.st_dev, st.st_ino, fd);
	}
	struct sfs_inode *in =
		kernel_only ? NULL : sfs_inode_open(fd, &st, flags, cloexec, &shared);
	if (!in)
		goto kernel;
	struct sfs_file *f = sfs_file_new(in, flags, pos);
	if (!f) {
		if (shared) /* the kernel's open file has lost O_APPEND */
			(void)SFS_REAL(fcntl)(fd, F_SETFL,
					      SFS_REAL(fcntl)(fd, F_GETFL) | (flags & O_APPEND));
		if ((flags & O_ACCMODE) != O_RDONLY)
			sfs_inode_writer_gone(in);
		sfs_inode_put(in);
		goto out;
	}
	f->kshared = shared;
	/* Read while fd is still marked (the install replaces the mark). */
	bool synced = how == MANAGE_PROMOTE && sfs_fd_pending_was_synced(fd);
	sfs_file_install(fd, f);
	sfs_file_put(f);
	if (how == MANAGE_PROMOTE) /* its pending calls were the inode's */
		sfs_lease_due(in);
	if (synced) /* as if its fsync had been the library's (fs/dax.h) */
		sfs_inode_synced_by_app(in);
	goto out;
kernel:
	/* Left to the kernel: in sync and strict modes its writes are still
	 * durable when they return. */
	if (sfs_oplog_on() && (flags & O_ACCMODE) != O_RDONLY)
		sfs_fd_set_dsync(fd, true);
out:
	errno = saved;
}

void sfs_manage(int fd, int flags)
{
	manage(fd, flags, (flags & O_CLOEXEC) != 0, 0, MANAGE_OPEN);
}

void sfs_manage_at(int fd, int flags, int64_t pos)
{
	manage(fd, flags, -1, pos, MANAGE_AT);
}

/* The kernel's rw_verify_area: a count negative as ssize_t, or an offset
 * that the count overflows, is EINVAL (checked after EBADF and EFAULT, and
 * on the offset the caller gave, before O_APPEND moves it). */
static long verify_area(int64_t pos, size_t n)
{
	if ((ssize_t)n < 0 || (int64_t)((uint64_t)pos + n) < 0)
		return -EINVAL;
	return 0;
}

ssize_t sfs_file_pread(struct sfs_file *f, void *buf, size_t n, int64_t off)
{
	if (off < 0)
		return -EINVAL;
	if (!sfs_file_readable(f))
		return -EBADF;
	if (!sfs_user_range_ok(buf, n))
		return -EFAULT;
	if (verify_area(off, n))
		return -EINVAL;
	return sfs_inode_pread(f->inode, buf, n, off);
}

ssize_t sfs_file_pwrite(struct sfs_file *f, const void *buf, size_t n, int64_t off)
{
	if (off < 0)
		return -EINVAL;
	if (!sfs_file_writable(f))
		return -EBADF;
	if (!sfs_user_range_ok(buf, n))
		return -EFAULT;
	if (verify_area(off, n))
		return -EINVAL;
	int64_t at;
	/* Linux appends on an O_APPEND descriptor whatever the offset. */
	return sfs_inode_pwrite(f->inode, buf, n, off, (sfs_file_flags(f) & O_APPEND) != 0, &at);
}

ssize_t sfs_file_read(struct sfs_file *f, void *buf, size_t n)
{
	if (!sfs_file_readable(f))
		return -EBADF;
	if (!sfs_user_range_ok(buf, n))
		return -EFAULT;
	sfs_mutex_lock(&f->pos_lock);
	ssize_t r = verify_area(f->pos, n);
	if (!r)
		r = sfs_inode_pread(f->inode, buf, n, f->pos);
	if (r > 0)
		f->pos += r;
	sfs_mutex_unlock(&f->pos_lock);
	return r;
}

ssize_t sfs_file_write(struct sfs_file *f, const void *buf, size_t n)
{
	if (!sfs_file_writable(f))
		return -EBADF;
	if (!sfs_user_range_ok(buf, n))
		return -EFAULT;
	sfs_mutex_lock(&f->pos_lock);
	int64_t at;
	ssize_t r = verify_area(f->pos, n);
	if (!r)
		r = sfs_inode_pwrite(f->inode, buf, n, f->pos, (sfs_file_flags(f) & O_APPEND) != 0,
				     &at);
	if (r >= 0)
		f->pos = at + r;
	sfs_mutex_unlock(&f->pos_lock);
	return r;
}

/* Copies and checks an application's iovec array as the kernel's
 * __import_iovec does: EINVAL for too many segments or any negative length
 * (all lengths first), then EFAULT per segment; the total is clamped to
 * MAX_RW_COUNT (a single segment is clamped before its address check).
 * Returns the total length or -errno; *out is the array (the caller frees
 * it when it is not the stack one). */
static ssize_t import_iov(const struct iovec *uiov, int cnt, struct iovec *stack, int nstack,
			  struct iovec **out)
{
	if ((unsigned)cnt > IOV_MAX)
		return -EINVAL;
	struct iovec *v = cnt <= nstack ? stack : malloc((size_t)cnt * sizeof(*v));
	if (!v)
		return -ENOMEM;
	*out = v;
	if (cnt == 0)
		return 0;
	if (!sfs_user_range_ok(uiov, (size_t)cnt * sizeof(*uiov)) ||
	    sfs_guarded_copy(v, uiov, (size_t)cnt * sizeof(*v)) != 0)
		return -EFAULT;
	for (int i = 0; i < cnt; i++)
		if ((ssize_t)v[i].iov_len < 0)
			return -EINVAL;
	if (cnt == 1) {
		v[0].iov_len = SFS_MIN(v[0].iov_len, SFS_MAX_RW_COUNT);
		return sfs_user_range_ok(v[0].iov_base, v[0].iov_len) ? (ssize_t)v[0].iov_len :
									-EFAULT;
	}
	size_t total = 0;
	for (int i = 0; i < cnt; i++) {
		if (!sfs_user_range_ok(v[i].iov_base, v[i].iov_len))
			return -EFAULT;
		v[i].iov_len = SFS_MIN(v[i].iov_len, SFS_MAX_RW_COUNT - total);
		total += v[i].iov_len;
	}
	return (ssize_t)total;
}

/* The RWF_* flags the library serves itself. */
#define SERVED_RWF (RWF_HIPRI | RWF_NOWAIT | RWF_DSYNC | RWF_SYNC | RWF_APPEND | RWF_NOAPPEND)

ssize_t sfs_file_readv(struct sfs_file *f, const struct iovec *uiov, int cnt, int64_t off, int rwf)
{
	if (rwf & ~SERVED_RWF)
		return -ENOTSUP;
	if (!sfs_file_readable(f))
		return -EBADF;
	struct iovec stack[8], *iov = NULL;
	ssize_t done = import_iov(uiov, cnt, stack, 8, &iov);
	if (done <= 0)
		goto out;
	bool use_pos = off < 0;
	if (use_pos)
		sfs_mutex_lock(&f->pos_lock);
	int64_t at = use_pos ? f->pos : off;
	if (verify_area(at, (size_t)done)) {
		done = -EINVAL;
		if (use_pos)
			sfs_mutex_unlock(&f->pos_lock);
		goto out;
	}
	done = sfs_inode_preadv(f->inode, iov, cnt, at);
	if (use_pos) {
		if (done > 0)
			f->pos += done;
		sfs_mutex_unlock(&f->pos_lock);
	}
out:
	if (iov && iov != stack)
		free(iov);
	return done;
}

ssize_t sfs_file_writev(struct sfs_file *f, const struct iovec *uiov, int cnt, int64_t off, int rwf)
{
	if (rwf & ~SERVED_RWF)
		return -ENOTSUP;
	if (!sfs_file_writable(f))
		return -EBADF;
	struct iovec stack[8], *iov = NULL;
	ssize_t done = import_iov(uiov, cnt, stack, 8, &iov);
	if (done <= 0)
		goto out;
	bool append = (sfs_file_flags(f) & O_APPEND) != 0;
	if (rwf & RWF_APPEND)
		append = true;
	if (rwf & RWF_NOAPPEND)
		append = false;
	bool use_pos = off < 0;
	if (use_pos)
		sfs_mutex_lock(&f->pos_lock);
	int64_t at;
	if (verify_area(use_pos ? f->pos : off, (size_t)done))
		done = -EINVAL;
	else
		done = sfs_inode_pwritev(f->inode, iov, cnt, use_pos ? f->pos : off, append, &at);
	if (use_pos) {
		if (done >= 0)
			f->pos = at + done;
		sfs_mutex_unlock(&f->pos_lock);
	}
	if (done > 0 && (rwf & (RWF_DSYNC | RWF_SYNC))) {
		int rc = sfs_inode_sync(f->inode, -1, !(rwf & RWF_SYNC));
		if (rc)
			done = rc;
	}
out:
	if (iov && iov != stack)
		free(iov);
	return done;
}

int64_t sfs_file_lseek(struct sfs_file *f, int64_t off, int whence)
{
	struct sfs_inode *in = f->inode;
	sfs_mutex_lock(&f->pos_lock);
	int64_t base, r;
	switch (whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		base = f->pos;
		break;
	case SEEK_END:
		/* A file not leased: another process may be changing its size,
		 * and the kernel's lseek answers in one call, with its own
		 * checks (EINVAL, EOVERFLOW), cheaper than the fstat of
		 * sfs_inode_size (PostgreSQL asks each relation's size this
		 * way, hundreds of thousands of times a run). Under the inode
		 * lock: kfd is swapped, its offset used (an unleased append)
		 * and a lease taken only under it. */
		if (!sfs_inode_leased(in)) {
			sfs_inode_lock(in);
			if (!sfs_inode_leased(in)) {
				r = SFS_REAL(lseek)(in->kfd, off, SEEK_END);
				r = r < 0 ? -errno : (f->pos = r);
				sfs_inode_unlock(in);
				sfs_mutex_unlock(&f->pos_lock);
				return r;
			}
			sfs_inode_unlock(in);
		}
		base = sfs_inode_size(in);
		if (base < 0) {
			sfs_mutex_unlock(&f->pos_lock);
			return base;
		}
		break;
	case SEEK_DATA:
	case SEEK_HOLE:
		/* Holes are the kernel's business: show it everything first.
		 * Under the inode lock, as kfd is swapped (install_rdwr) and
		 * its offset used (an unleased append) only under it. */
		sfs_inode_lock(in);
		r = sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE);
		if (!r) {
			r = SFS_REAL(lseek)(in->kfd, off, whence);
			r = r < 0 ? -errno : (f->pos = r);
		}
		sfs_inode_unlock(in);
		sfs_mutex_unlock(&f->pos_lock);
		return r;
	default:
		sfs_mutex_unlock(&f->pos_lock);
		return -EINVAL;
	}
	if ((off > 0 && base > INT64_MAX - off) || base + off < 0) {
		r = -EINVAL;
	} else {
		r = base + off;
		/* Past 1 TiB, ask the kernel whether the file system allows the
		 * offset (ext4's limit is 16 TiB; its lseek says EINVAL). The
		 * library's descriptor's own offset is used only by unleased
		 * appends, under the inode lock, as here. */
		int rc = 0;
		if (r > ((int64_t)1 << 40)) {
			sfs_inode_lock(in);
			rc = SFS_REAL(lseek)(in->kfd, r, SEEK_SET) < 0 ? -errno : 0;
			sfs_inode_unlock(in);
		}
		if (rc)
			r = rc;
		else
			f->pos = r;
	}
	sfs_mutex_unlock(&f->pos_lock);
	return r;
}

/* Sync/strict: the file leaves the log's care (fdatasync, COMMIT), so no
 * replay can later write its older bytes over what another process writes
 * after this close. */
static int commit_file(struct sfs_inode *in)
{
	if (!sfs_oplog_on() || !in->log.logged)
		return 0;
	sfs_inode_lock(in);
	int rc = sfs_inode_log_commit(in);
	sfs_inode_unlock(in);
	return rc;
}

int sfs_file_close(int fd, struct sfs_file *f)
{
	int rc = sfs_inode_flush(f->inode, SFS_FLUSH_VISIBLE);
	if (!rc)
		rc = commit_file(f->inode);
	int r = SFS_REAL(close)(fd);
	sfs_file_put(f);
	if (r == 0 && rc < 0) {
		errno = -rc;
		return -1;
	}
	return r;
}

/* kv->f is set: relink, and write the offset back when the call uses it.
 * Sync/strict: the file's records die first, so a replay cannot run them
 * over what the kernel is about to change. */
static void sfs_kview_begin_file(struct sfs_kview *kv)
{
	sfs_inode_flush(kv->f->inode, SFS_FLUSH_VISIBLE);
	commit_file(kv->f->inode);
	if (kv->uses_pos) {
		sfs_mutex_lock(&kv->f->pos_lock);
		if (!sfs_file_kpos_on(kv->f)) /* else the kernel's is the file's */
			SFS_REAL(lseek)(kv->fd, kv->f->pos, SEEK_SET);
	}
}

void sfs_kview_begin(struct sfs_kview *kv, int fd, bool uses_pos)
{
	kv->fd = fd;
	kv->uses_pos = uses_pos;
	kv->holding = false;
	kv->f = sfs_live() ? sfs_fd_get(fd) : NULL;
	if (kv->f)
		sfs_kview_begin_file(kv);
}

void sfs_kview_hold_fallocate(struct sfs_kview *kv, int mode, int64_t off, int64_t len)
{
	if (!kv->f || sfs_inode_leased(kv->f->inode) || off < 0 || len <= 0)
		return;
	struct sfs_inode *in = kv->f->inode;
	if (mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE))
		len = INT64_MAX - off; /* every block from off on moves */
	else if (!(mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
		return; /* allocation only: no byte changes */
	kv->holding = sfs_share_lock(in->dev, in->ino, off, (uint64_t)len, &kv->held) == 0;
}

void sfs_kview_end(struct sfs_kview *kv)
{
	struct sfs_file *f = kv->f;
	if (kv->holding)
		sfs_share_unlock(&kv->held);
	if (!f)
		return;
	int saved = errno;
	if (kv->uses_pos) {
		off_t pos = SFS_REAL(lseek)(kv->fd, 0, SEEK_CUR);
		if (pos >= 0)
			f->pos = f->kpos_at = pos;
		sfs_mutex_unlock(&f->pos_lock);
	}
	sfs_inode_kernel_wrote(f->inode);
	sfs_file_put(f);
	errno = saved;
}

void sfs_inode_kernel_wrote(struct sfs_inode *in)
{
	sfs_inode_kernel_changed(in);
	sfs_logsync_changed(in);
	sfs_inode_lock(in);
	sfs_inode_resync_locked(in);
	if (sfs_oplog_on()) {
		/* The kernel changed the file outside the log: durable now, and
		 * older records must not be replayed over the change. */
		in->log.logged = true;
		sfs_inode_log_commit(in);
	}
	sfs_inode_unlock(in);
}
