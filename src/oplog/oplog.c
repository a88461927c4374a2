/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "oplog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../fs/flush.h"
#include "../fs/inode.h"
#include "../fs/registry.h"
#include "../init.h"
#include "../interpose/real.h"
#include "../util/compiler.h"
#include "../util/crc32c.h"
#include "../util/msg.h"
#include "../util/pmem.h"
#include "../util/stats.h"
#include "format.h"

#define MAX_IOV 64

static struct {
	pthread_mutex_t open_lock;
	bool opened, failed;
	_Atomic bool closed;		/* given back at exit: writes go direct */
	int fd;				/* the log file (internal fd, flock'ed) */
	struct sfs_pmem_map pm;		/* on DAX: the log mapped, written with stores */
	struct sfs_reg_proc *slot;	/* shared state (or `own`) */
	struct sfs_reg_proc own;	/* when there is no registry */
	_Atomic uint32_t next_file;	/* file ids handed out this generation */
	char name[64];			/* the log's name in <root>/.splitfs */
	pthread_mutex_t ckpt_lock;	/* one checkpoint at a time */
} L = {
	.open_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
	.ckpt_lock = PTHREAD_MUTEX_INITIALIZER,
};

bool sfs_oplog_on(void)
{
	return sfs_g.opt.mode != SFS_MODE_POSIX && !L.failed;
}

bool sfs_oplog_dax(void)
{
	return L.pm.addr != NULL;
}

/* The application's RLIMIT_FSIZE applies to every write(2), the library's
 * into its log too (SIGXFSZ, EFBIG past it). Stores into a mapping of the
 * pre-sized log are not writes in that sense: past the limit a record goes
 * that way, made durable with msync. */
static int write_mapped(int fd, const struct iovec *v, int n, uint64_t off, size_t want)
{
	uint64_t start = off & ~(uint64_t)(SFS_BLOCK - 1) /* x86-64 pages */;
	size_t len = (size_t)(off + want - start);
	char *m = sfs_real.mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
	if (m == MAP_FAILED)
		return -errno;
	char *p = m + (off - start);
	for (int i = 0; i < n; i++) {
		memcpy(p, v[i].iov_base, v[i].iov_len);
		p += v[i].iov_len;
	}
	int rc = msync(m, len, MS_SYNC) == 0 ? 0 : -errno;
	munmap(m, len);
	return rc;
}

/* Writes a record at off with one synchronous write: entry, payload, zero
 * padding to the next 64 bytes. The CRC covers entry and payload. */
static int write_record(int fd, struct sfs_log_entry *e, const struct iovec *iov, int cnt,
			uint64_t off)
{
	static const char zeros[SFS_LOG_UNIT];
	uint32_t c;
	struct sfs_log_entry z = *e;
	z.crc = 0;
	c = sfs_crc32c_update(~0u, &z, sizeof(z));
	for (int i = 0; i < cnt; i++)
		c = sfs_crc32c_update(c, iov[i].iov_base, iov[i].iov_len);
	e->crc = ~c;
	struct iovec v[MAX_IOV + 2];
	int n = 0;
	v[n++] = (struct iovec){e, sizeof(*e)};
	for (int i = 0; i < cnt; i++)
		v[n++] = iov[i];
	size_t pad = (size_t)(sfs_log_record_len(e->payload) - SFS_LOG_UNIT - e->payload);
	if (pad)
		v[n++] = (struct iovec){(void *)zeros, pad};
	size_t want = (size_t)sfs_log_record_len(e->payload);
	if (fd == L.fd && L.pm.addr) { /* DAX: stores and one fence, no system call */
		sfs_pmem_writev(&L.pm, off, v, n);
		return 0;
	}
	uint64_t lim = atomic_load_explicit(&sfs_g.fsize_limit, memory_order_relaxed);
	if (sfs_unlikely(off + want > lim))
		return write_mapped(fd, v, n, off, want);
	ssize_t w = sfs_real.pwritev2(fd, v, n, (off_t)off, RWF_DSYNC);
	if (w < 0)
		return -errno;
	return (size_t)w == want ? 0 : -EIO;
}

/* --- opening the log ------------------------------------------------------ */

static int write_header(int fd, uint64_t gen, uint64_t size)
{
	struct sfs_log_entry h = {
		.op = SFS_LOG_HEADER,
		.version = 1,
		.gen = gen,
		.off = SFS_LOG_MAGIC,
		.arg = size,
		.pid = (uint64_t)sfs_self_pid(),
	};
	return write_record(fd, &h, NULL, 0, 0);
}

/* The generation in a log's header, or 0 if it has none. */
static uint64_t read_gen(int fd)
{
	struct sfs_log_entry h;
	if (sfs_real.pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.op != SFS_LOG_HEADER ||
	    h.off != SFS_LOG_MAGIC || h.crc != sfs_log_crc(&h, NULL))
		return 0;
	return h.gen;
}

/* Takes a free log (given back by a process that exited cleanly) if there
 * is one of the right size: renaming it is the claim. */
static int claim_free(const char *mine)
{
	int dfd = sfs_real.openat(sfs_g.priv_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	DIR *d = fdopendir(dfd);
	if (!d) {
		sfs_real.close(dfd);
		return -1;
	}
	int fd = -1;
	struct dirent *de;
	while (fd < 0 && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "log.free.", 9) != 0)
			continue;
		if (sfs_real.renameat(sfs_g.priv_dirfd, de->d_name, sfs_g.priv_dirfd, mine) != 0)
			continue; /* another process took it */
		fd = sfs_real.openat(sfs_g.priv_dirfd, mine, O_RDWR | O_CLOEXEC);
		struct stat st;
		if (fd >= 0 && (sfs_real.fstat(fd, &st) != 0 ||
				(uint64_t)st.st_size != sfs_g.opt.log_size)) {
			sfs_real.close(fd);
			fd = -1;
			sfs_real.unlinkat(sfs_g.priv_dirfd, mine, 0);
		}
	}
	closedir(d);
	return fd;
}

/* A new log: zero-filled (so synchronous writes into it change no
 * metadata), durable, its name durable. */
static int create_log(const char *name)
{
	int fd = sfs_real.openat(sfs_g.priv_dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
				 0600);
	if (fd < 0)
		return -errno;
	/* Extents in 2 MiB-aligned pieces (XFS's extent size hint; elsewhere
	 * refused, and nothing changes): on DAX, a 2 MiB-aligned mapping of
	 * them takes one page fault per 2 MiB instead of one per 4 KiB. */
	struct fsxattr xa;
	if (sfs_real.ioctl(fd, FS_IOC_FSGETXATTR, &xa) == 0) {
		xa.fsx_xflags |= FS_XFLAG_EXTSIZE;
		xa.fsx_extsize = 2u << 20;
		sfs_real.ioctl(fd, FS_IOC_FSSETXATTR, &xa);
	}
	static const char zeros[1 << 16];
	for (uint64_t off = 0; off < sfs_g.opt.log_size; off += sizeof(zeros)) {
		size_t n = (size_t)SFS_MIN((uint64_t)sizeof(zeros), sfs_g.opt.log_size - off);
		if (sfs_real.pwrite(fd, zeros, n, (off_t)off) != (ssize_t)n)
			goto fail;
	}
	if (sfs_real.fsync(fd) != 0)
		goto fail;
	/* The name too (priv_dirfd is O_PATH, which fsync refuses). */
	int dfd = sfs_real.openat(sfs_g.priv_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		goto fail;
	int drc = sfs_real.fsync(dfd);
	sfs_real.close(dfd);
	if (drc != 0)
		goto fail;
	return fd;
fail:;
	int rc = -errno;
	sfs_real.close(fd);
	sfs_real.unlinkat(sfs_g.priv_dirfd, name, 0);
	return rc ? rc : -EIO;
}

static int open_log(void)
{
	char name[64];
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(name, sizeof(name), "log.%d.%lld%09ld", (int)sfs_self_pid(),
		 (long long)now.tv_sec, now.tv_nsec);
	int fd = claim_free(name);
	if (fd < 0)
		fd = create_log(name);
	if (fd < 0)
		return fd;
	/* Held while the process lives: recovery takes only unlocked logs. */
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		sfs_real.close(fd);
		return -EAGAIN;
	}
	uint64_t gen = read_gen(fd) + 1; /* a reused log's old records die */
	int rc = write_header(fd, gen, sfs_g.opt.log_size);
	if (rc) {
		sfs_real.close(fd);
		return rc;
	}
	/* On DAX the records are stored through a MAP_SYNC mapping (the log
	 * is allocated and written, so its faults change no metadata). Mapped
	 * before the descriptor turns internal: libpmem2 calls fcntl on it,
	 * which the library refuses for its own descriptors. */
	if (sfs_pmem_map(fd, sfs_g.opt.log_size, &L.pm) == 0)
		sfs_stat_event(SFS_EV_dax_logs, 1);
	L.fd = sfs_internal_fd(fd);
	snprintf(L.name, sizeof(L.name), "%s", name);
	L.slot = sfs_reg_proc_claim();
	if (!L.slot) {
		L.slot = &L.own;
		pthread_mutexattr_t a;
		pthread_mutexattr_init(&a);
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
		pthread_mutex_init(&L.own.lock, &a);
		pthread_mutexattr_destroy(&a);
	}
	sfs_reg_proc_lock(L.slot);
	L.slot->size = sfs_g.opt.log_size;
	atomic_store(&L.slot->gen, gen);
	atomic_store(&L.slot->seq, 1);
	atomic_store(&L.slot->tail, SFS_LOG_UNIT);
	/* A path too long for the slot: others cannot reach this log (they
	 * then only warn when taking over one of its files). */
	size_t dl = strlen(sfs_g.priv_dir), nl = strlen(name);
	if (dl + 1 + nl < sizeof(L.slot->path)) {
		memcpy(L.slot->path, sfs_g.priv_dir, dl);
		L.slot->path[dl] = '/';
		memcpy(L.slot->path + dl + 1, name, nl + 1);
	} else {
		L.slot->path[0] = '\0';
	}
	pthread_mutex_unlock(&L.slot->lock);
	atomic_store(&L.next_file, 1);
	return 0;
}

/* The log, opened on first use (a process in sync mode that never writes
 * never makes one). */
static bool ready(void)
{
	if (__atomic_load_n(&L.opened, __ATOMIC_ACQUIRE))
		return true;
	/* Making the log is a write of log_size bytes: not past the
	 * application's RLIMIT_FSIZE (the writes go direct meanwhile). */
	if (atomic_load(&sfs_g.fsize_limit) < sfs_g.opt.log_size)
		return false;
	pthread_mutex_lock(&L.open_lock);
	if (!L.opened && !L.failed && !atomic_load(&L.closed)) {
		int rc = open_log();
		if (rc) {
			sfs_error("cannot make the operation log in %s: %s; %s mode is off",
				  sfs_g.priv_dir, strerror(-rc), sfs_mode_name(sfs_g.opt.mode));
			L.failed = true;
		} else {
			__atomic_store_n(&L.opened, true, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&L.open_lock);
	return L.opened;
}

/* --- claiming space, checkpoints ------------------------------------------ */

/* Set while this thread checkpoints: a COMMIT it would add (an inode
 * closed meanwhile, destroyed by the checkpoint's last reference) is not
 * needed, the new generation kills every record, and could not be
 * claimed while the log is closed. */
static __thread bool checkpointing __attribute__((tls_model("initial-exec")));

static void fsync_logged(struct sfs_inode *in, void *unused)
{
	(void)unused;
	sfs_relink_for_checkpoint(in); /* a DAX window's bytes into the file */
	if (in->logged)
		sfs_real.fdatasync(in->kfd);
}

/* Every file the log covers durable, then a new generation. Caller holds
 * ckpt_lock. No inode lock is needed: the log is closed to new claims, and
 * the writers in flight are waited for. With keep_closed (process end) the
 * log stays closed. */
static int checkpoint(bool keep_closed)
{
	struct sfs_reg_proc *p = L.slot;
	uint64_t t = atomic_load(&p->tail);
	while (!(t & SFS_LOG_TAIL_CLOSED) &&
	       !atomic_compare_exchange_weak(&p->tail, &t, t | SFS_LOG_TAIL_CLOSED))
		;
	while (atomic_load(&p->inflight))
		sched_yield();
	checkpointing = true;
	sfs_inode_foreach(fsync_logged, NULL);
	checkpointing = false;
	uint64_t gen = atomic_load(&p->gen) + 1;
	int rc = write_header(L.fd, gen, p->size);
	if (rc) {
		atomic_store(&p->tail, t & ~SFS_LOG_TAIL_CLOSED); /* reopen as it was */
		return rc;
	}
	atomic_store(&p->gen, gen);
	atomic_store(&p->seq, 1);
	atomic_store(&L.next_file, 1);
	atomic_store(&p->tail, SFS_LOG_UNIT | (keep_closed ? SFS_LOG_TAIL_CLOSED : 0));
	sfs_stat_event(SFS_EV_log_checkpoints, 1);
	return 0;
}

/* Claims len bytes of p's current generation by compare-and-swap, counted
 * in inflight. Returns 0, -ENOSPC when it does not fit (full), or -EAGAIN
 * while a checkpoint has the log closed. */
static int try_claim(struct sfs_reg_proc *p, uint64_t len, uint64_t *off, uint64_t *seq,
		     uint64_t *gen)
{
	/* Counted before the claim: a checkpoint that closes the log after
	 * this claim succeeds waits for the record. */
	atomic_fetch_add(&p->inflight, 1);
	uint64_t t = atomic_load(&p->tail);
	while (!(t & SFS_LOG_TAIL_CLOSED) && t + len <= p->size) {
		if (atomic_compare_exchange_weak(&p->tail, &t, t + len)) {
			*off = t;
			*seq = atomic_fetch_add(&p->seq, 1);
			*gen = atomic_load(&p->gen); /* stable while counted */
			return 0;
		}
	}
	atomic_fetch_sub(&p->inflight, 1);
	return (t & SFS_LOG_TAIL_CLOSED) ? -EAGAIN : -ENOSPC;
}

/* Claims len bytes in this process's log, checkpointing when it is full. */
static int claim(uint64_t len, uint64_t *off, uint64_t *seq, uint64_t *gen)
{
	if (len > sfs_g.opt.log_size - SFS_LOG_UNIT)
		return -E2BIG;
	for (;;) {
		int rc = try_claim(L.slot, len, off, seq, gen);
		if (rc == -EAGAIN) {
			if (atomic_load(&L.closed))
				return -ENOTSUP; /* the process is exiting: no log now */
			sfs_relink_held(); /* the checkpoint may need those */
			sched_yield();	   /* another thread is checkpointing */
			continue;
		}
		if (rc != -ENOSPC)
			return rc;
		sfs_relink_held();
		pthread_mutex_lock(&L.ckpt_lock);
		uint64_t t = atomic_load(&L.slot->tail);
		rc = (t & SFS_LOG_TAIL_CLOSED) || t + len <= L.slot->size ? 0 : checkpoint(false);
		pthread_mutex_unlock(&L.ckpt_lock);
		if (rc)
			return rc;
	}
}

void sfs_oplog_done(void)
{
	atomic_fetch_sub(&L.slot->inflight, 1);
}

/* One record (claims, writes, counts). The ticket stays held when keep. */
static int append(struct sfs_log_entry *e, const struct iovec *iov, int cnt, bool keep)
{
	uint64_t off, seq, gen;
	int rc = claim(sfs_log_record_len(e->payload), &off, &seq, &gen);
	if (rc)
		return rc;
	e->version = 1;
	e->gen = gen;
	e->seq = seq;
	e->pid = (uint64_t)sfs_self_pid();
	rc = write_record(L.fd, e, iov, cnt, off);
	sfs_stat_event(SFS_EV_log_records, 1);
	if (rc || !keep)
		sfs_oplog_done();
	return rc;
}

/* The FILE record binding an id to the inode, once per generation. Caller
 * holds the inode lock. */
static int bind_file(struct sfs_inode *in)
{
	uint64_t gen = atomic_load(&L.slot->gen);
	if (in->log_gen == gen && in->log_file)
		return 0;
	struct {
		struct file_handle h;
		unsigned char bytes[MAX_HANDLE_SZ];
	} fh;
	fh.h.handle_bytes = MAX_HANDLE_SZ;
	int mount_id;
	if (name_to_handle_at(in->kfd, "", &fh.h, &mount_id, AT_EMPTY_PATH) != 0)
		fh.h.handle_bytes = 0, fh.h.handle_type = 0;
	char path[PATH_MAX + 64], proc[32];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", in->kfd);
	ssize_t pl = readlink(proc, path, PATH_MAX);
	if (pl < 0)
		pl = 0;
	path[pl] = '\0';
	unsigned int igen = 0;
	sfs_real.ioctl(in->kfd, FS_IOC_GETVERSION, &igen);
	/* Ids carry the generation's low bits, so an id another process reads
	 * from the registry cannot name a file of a later generation. */
	uint32_t n = atomic_fetch_add(&L.next_file, 1);
	if (n > 0xffff) { /* ids of this generation used up: start the next */
		sfs_relink_held();
		pthread_mutex_lock(&L.ckpt_lock);
		int rc = atomic_load(&L.slot->gen) == gen ? checkpoint(false) : 0;
		pthread_mutex_unlock(&L.ckpt_lock);
		return rc ? rc : bind_file(in);
	}
	uint32_t id = (uint32_t)(gen & 0xffff) << 16 | n;
	struct iovec v[2] = {
		{&fh, sizeof(fh.h) + fh.h.handle_bytes},
		{path, (size_t)pl + 1},
	};
	struct sfs_log_entry e = {
		.op = SFS_LOG_FILE,
		.payload = (uint32_t)(v[0].iov_len + v[1].iov_len),
		.file = id,
		.off = (uint64_t)in->ino,
		.arg = igen,
	};
	int rc = append(&e, v, 2, false);
	if (rc)
		return rc;
	/* The file's records are in a newer generation than a COMMIT another
	 * process might add for an older binding. */
	if (e.gen != gen)
		return bind_file(in); /* a checkpoint ran meanwhile */
	in->log_gen = gen;
	in->log_file = id;
	if (in->reg) { /* the inode lock is the entry's lock */
		in->reg->owner = sfs_self_pid();
		in->reg->kfd = in->kfd;
		in->reg->log_slot = (int16_t)sfs_reg_proc_index(L.slot);
		in->reg->log_file = id;
	}
	return 0;
}

int sfs_oplog_write(struct sfs_inode *in, const struct iovec *iov, int cnt, size_t n, int64_t off,
		    int64_t size_after)
{
	if (atomic_load(&L.closed) || !ready())
		return -ENOTSUP;
	if (cnt > MAX_IOV || n > UINT32_MAX)
		return -E2BIG;
	int rc = bind_file(in);
	if (rc)
		return rc;
	struct sfs_log_entry e = {
		.op = SFS_LOG_WRITE,
		.payload = (uint32_t)n,
		.file = in->log_file,
		.off = (uint64_t)off,
		.arg = (uint64_t)size_after,
	};
	in->logged = true;
	rc = append(&e, iov, cnt, true);
	if (!rc && e.gen != in->log_gen) {
		/* A checkpoint moved to a new generation between binding and
		 * claiming: the record names a dead id. Write it again. */
		sfs_oplog_done();
		return sfs_oplog_write(in, iov, cnt, n, off, size_after);
	}
	if (!rc)
		sfs_stat_event(SFS_EV_log_bytes, n);
	return rc;
}

int sfs_oplog_truncate(struct sfs_inode *in, int64_t size)
{
	if (!ready())
		return -ENOTSUP;
	int rc = bind_file(in);
	if (rc)
		return rc;
	struct sfs_log_entry e = {.op = SFS_LOG_TRUNCATE, .file = in->log_file, .off = (uint64_t)size};
	in->logged = true;
	return append(&e, NULL, 0, false);
}

int sfs_oplog_commit(struct sfs_inode *in)
{
	if (!in->logged)
		return 0;
	/* A DAX window's bytes are only in the records: into the file first. */
	if (atomic_load(&in->staged)) {
		int rc = sfs_inode_flush_locked(in, SFS_FLUSH_VISIBLE);
		if (rc)
			return rc;
	}
	if (sfs_real.fdatasync(in->kfd) != 0)
		return -errno;
	if (!__atomic_load_n(&L.opened, __ATOMIC_ACQUIRE) || checkpointing) {
		in->logged = false; /* no log, so no records of it */
		return 0;
	}
	uint64_t gen = atomic_load(&L.slot->gen);
	int rc = 0;
	if (in->log_gen == gen && in->log_file) { /* older generations' records are dead already */
		struct sfs_log_entry e = {.op = SFS_LOG_COMMIT, .file = in->log_file};
		rc = append(&e, NULL, 0, false);
	}
	if (!rc) {
		in->logged = false;
		if (in->reg)
			in->reg->log_slot = -1; /* no live records for another to close */
	}
	return rc;
}

int sfs_oplog_commit_other(int slot_index, uint32_t file, int32_t owner)
{
	struct sfs_reg_proc *p = sfs_reg_proc_at(slot_index);
	if (!p)
		return -ENOENT;
	if (p->pid != owner)
		return 0; /* that process is gone, and its log replayed or dead */
	uint64_t off, seq, gen;
	int rc;
	while ((rc = try_claim(p, sfs_log_record_len(0), &off, &seq, &gen)) == -EAGAIN)
		sched_yield();
	/* Full: its owner checkpoints (fsyncs everything) before it writes
	 * again, and until then a replay only repeats data the caller just
	 * made durable in the file. Nothing to add. */
	if (rc == -ENOSPC)
		return 0;
	if ((gen & 0xffff) != file >> 16 || p->pid != owner) {
		/* That generation is over (its records are dead): the claimed
		 * space stays a gap, which replay steps over. */
		atomic_fetch_sub(&p->inflight, 1);
		return 0;
	}
	struct sfs_log_entry e = {
		.op = SFS_LOG_COMMIT,
		.version = 1,
		.file = file,
		.gen = gen,
		.seq = seq,
		.pid = (uint64_t)sfs_self_pid(),
	};
	char path[sizeof(p->path)];
	memcpy(path, p->path, sizeof(path));
	int fd = sfs_real.open(path, O_WRONLY | O_CLOEXEC);
	rc = fd < 0 ? -errno : write_record(fd, &e, NULL, 0, off);
	if (fd >= 0)
		sfs_real.close(fd);
	atomic_fetch_sub(&p->inflight, 1);
	return rc;
}

/* --- process end ------------------------------------------------------------ */

void sfs_oplog_close(bool final)
{
	if (!L.opened)
		return;
	/* Every file durable; then the log's records are dead and it can serve
	 * another process. */
	atomic_store(&L.closed, true);
	pthread_mutex_lock(&L.ckpt_lock);
	int rc = checkpoint(true);
	pthread_mutex_unlock(&L.ckpt_lock);
	if (rc == 0) {
		char name[64], freed[64];
		snprintf(freed, sizeof(freed), "log.free.%d.%lld", (int)sfs_self_pid(),
			 (long long)time(NULL));
		snprintf(name, sizeof(name), "%s", L.name);
		sfs_real.renameat(sfs_g.priv_dirfd, name, sfs_g.priv_dirfd, freed);
	}
	if (L.slot != &L.own)
		sfs_reg_proc_release(L.slot);
	sfs_pmem_unmap(&L.pm);
	sfs_internal_close(L.fd);
	L.fd = -1;
	L.opened = false;
	if (!final)
		atomic_store(&L.closed, false); /* an exec that fails goes on logging */
}

void sfs_oplog_reset_child(void)
{
	/* The parent's descriptor shares the flock: closing our copy keeps the
	 * parent's log locked. The child makes its own log when it writes. */
	sfs_pmem_unmap(&L.pm);
	if (L.fd >= 0)
		sfs_internal_close(L.fd);
	L.fd = -1;
	L.opened = false;
	L.slot = NULL;
	pthread_mutex_init(&L.open_lock, NULL);
	pthread_mutex_init(&L.ckpt_lock, NULL);
}
