/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "oplog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/self.h"
#include "libsys.h"
#include "../sys/real.h"
#include "../util/clock.h"
#include "../util/compiler.h"
#include "../util/msg.h"
#include "../util/pmem.h"
#include "../util/signals.h"
#include "../util/stats.h"
#include "format.h"
#include "lanes.h"
#include "logfile.h"
#include "recover.h"
#include "rewrite.h"

/* The pieces of a write's data one record takes: with its time, what
 * logfile.c writes (64). */
#define MAX_IOV 63

/* The log set's generation and record numbers (format.h: one for all its
 * files). Writers count themselves in `inflight` until the record (and the
 * write it logs) is done, then claim space in a lane by compare-and-swap on
 * its tail; a checkpoint sets `closed`, waits for `inflight` to drain, and
 * reopens every lane at a new generation. */
struct log_space {
	_Atomic uint64_t gen; /* current generation */
	_Atomic uint64_t seq; /* next record number */
	_Atomic bool closed;  /* claims refused (a checkpoint, the process's end) */
	uint64_t size;	      /* each log file's size */
	_Atomic uint32_t inflight;
};

SFS_HOT static struct {
	pthread_mutex_t open_lock;
	bool opened;
	int open_error;	     /* why the last try to make the log failed */
	int64_t retry_at;    /* ns (monotonic): the next try, not before */
	_Atomic bool closed; /* given back at exit: writes go direct */
	uint64_t size;	     /* a log's size (SPLITFS_LOG_SIZE, or less: RLIMIT_FSIZE) */
	struct sfs_log_inflight *inflight; /* strict: the in-flight table (mapped) */
	struct log_space *slot;		   /* &space once the log is open */
	struct log_space space;
	_Atomic uint32_t next_file; /* file ids handed out this generation */
	uint64_t set;		    /* the set's nonce, in every record */
	pthread_mutex_t ckpt_lock;  /* one checkpoint at a time */
} L = {
	.open_lock = PTHREAD_MUTEX_INITIALIZER,
	.ckpt_lock = PTHREAD_MUTEX_INITIALIZER,
};

bool sfs_oplog_on(void)
{
	return sfs_g.opt.mode != SFS_MODE_POSIX;
}

bool sfs_oplog_dax(void)
{
	return sfs_lane_main()->pm.addr != NULL;
}

/* --- opening the log ------------------------------------------------------ */

/* A nonce for a new set: random, never 0 (0 marks logs without lanes). */
static uint64_t new_set_nonce(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		v = (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)t.tv_sec << 20 ^
		    (uint64_t)sfs_self_pid();
	}
	return v ? v : 1;
}

static int open_log(void)
{
	uint64_t size = sfs_logfile_size();
	if (size == 0)
		return -EFBIG; /* RLIMIT_FSIZE under 1 MiB */
	char name[64];
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(name, sizeof(name), "log.%d.%lld%09ld", (int)sfs_self_pid(), (long long)now.tv_sec,
		 now.tv_nsec);
	uint64_t set = new_set_nonce();
	int fd = sfs_logfile_claim_free(name, size);
	uint64_t gen;
	if (fd >= 0) {
		gen = sfs_logfile_read_gen(fd) + 1; /* a reused log's old records die */
		int rc = sfs_logfile_write_header(fd, gen, size, set, 0);
		if (rc) {
			SFS_REAL(close)(fd);
			return rc;
		}
	} else {
		fd = sfs_logfile_create(name, size, set, 0);
		if (fd < 0)
			return fd;
		gen = 1;
	}
	struct sfs_pmem_map pm = {0};
	/* On DAX the records are stored through a MAP_SYNC mapping (the log
	 * is allocated and written, so its faults change no metadata). Mapped
	 * before the descriptor turns internal: libpmem2 calls fcntl on it,
	 * which the library refuses for its own descriptors. */
	if (sfs_pmem_map(fd, size, &pm) == 0)
		sfs_stat_event(SFS_EV_dax_logs, 1);
	/* Strict mode marks the writes it applies (format.h): plain stores
	 * into the page cache, for a recovery on this mount. */
	L.inflight = NULL;
	if (sfs_g.opt.mode == SFS_MODE_STRICT) {
		void *m = SFS_REAL(mmap)(NULL, SFS_LOG_RECORDS_OFF - SFS_LOG_INFLIGHT_OFF,
					 PROT_READ | PROT_WRITE, MAP_SHARED, fd,
					 SFS_LOG_INFLIGHT_OFF);
		if (m != MAP_FAILED) {
			madvise(m, SFS_LOG_RECORDS_OFF - SFS_LOG_INFLIGHT_OFF, MADV_DONTFORK);
			L.inflight = m;
			memset(L.inflight, 0, SFS_LOG_INFLIGHT_SLOTS * sizeof(*L.inflight));
		}
	}
	sfs_lanes_start(sfs_internal_fd(fd), &pm, name);
	L.size = size;
	L.set = set;
	L.slot = &L.space;
	L.slot->size = size;
	atomic_store(&L.slot->gen, gen);
	atomic_store(&L.slot->seq, 1);
	atomic_store(&L.slot->inflight, 0);
	atomic_store(&L.slot->closed, false);
	atomic_store(&L.next_file, 1);
	return 0;
}

/* The log, opened on first use (a process in sync mode that never writes
 * never makes one). 0, or why there is none: a write that needs the log
 * then fails with that (strict) or goes to its file durably (sync). */
static int ready(void)
{
	if (__atomic_load_n(&L.opened, __ATOMIC_ACQUIRE))
		return 0;
	int64_t now = sfs_coarse_ns();
	sfs_mutex_lock(&L.open_lock);
	int rc = L.opened ? 0 : atomic_load(&L.closed) ? -ENOTSUP : L.open_error;
	if (!L.opened && !atomic_load(&L.closed) && now >= L.retry_at) {
		rc = open_log();
		if (rc) {
			/* Said once; tried again a second later (space may have
			 * been freed, the directory made writable). POSIX mode
			 * loses only speed (its fdatasync is the kernel's): a
			 * performance event, not a message on the program's
			 * stderr, but with SPLITFS_VERBOSE. */
			if (!L.open_error && sfs_g.opt.mode != SFS_MODE_POSIX)
				sfs_error("cannot make the operation log in %s: %s; %s",
					  sfs_g.priv_dir, strerror(-rc),
					  sfs_g.opt.mode == SFS_MODE_STRICT ?
						  "strict-mode writes fail until it can be made" :
						  "writes are made durable one by one meanwhile");
			else if (!L.open_error && sfs_g.opt.verbose)
				sfs_msg("cannot make the operation log in %s: %s; fdatasync is "
					"the kernel's meanwhile",
					sfs_g.priv_dir, strerror(-rc));
			sfs_stat_event(SFS_EV_log_unavailable, 1);
			L.open_error = rc;
			L.retry_at = now + 1000000000;
		} else {
			L.open_error = 0;
			__atomic_store_n(&L.opened, true, __ATOMIC_RELEASE);
		}
	}
	sfs_mutex_unlock(&L.open_lock);
	return rc;
}

/* --- claiming space, checkpoints ------------------------------------------ */

/* Set while this thread checkpoints: a COMMIT it would add (an inode
 * closed meanwhile, destroyed by the checkpoint's last reference) is not
 * needed, the new generation kills every record, and could not be
 * claimed while the log is closed. */
static __thread bool checkpointing __attribute__((tls_model("initial-exec")));

/* Registered by the file system at start-up, before the log is used. */
SFS_HOT static const struct sfs_oplog_ops *ops;

void sfs_oplog_set_ops(const struct sfs_oplog_ops *o)
{
	ops = o;
}

/* Every file the log covers durable, then a new generation. Caller holds
 * ckpt_lock. No inode lock is needed: the log is closed to new claims, and
 * the writers in flight are waited for. With keep_closed (process end) the
 * log stays closed. */
static int checkpoint(bool keep_closed)
{
	struct log_space *p = L.slot;
	bool was_closed = atomic_exchange(&p->closed, true);
	while (atomic_load(&p->inflight))
		sched_yield();
	checkpointing = true;
	int rc = ops->sync_files();
	checkpointing = false;
	/* The main log's header alone holds the set's generation: this one
	 * write kills the records of every lane. Not written when a file is
	 * not durable: its records must live on. */
	uint64_t gen = atomic_load(&p->gen) + 1;
	if (rc == 0)
		rc = sfs_logfile_write_header(sfs_lane_main()->fd, gen, p->size, L.set, 0);
	if (rc) {
		atomic_store(&p->closed, was_closed); /* reopen as it was */
		return rc;
	}
	atomic_store(&p->gen, gen);
	atomic_store(&p->seq, 1);
	atomic_store(&L.next_file, 1);
	sfs_lanes_rewind();
	atomic_store(&p->closed, keep_closed);
	sfs_stat_event(SFS_EV_log_checkpoints, 1);
	return 0;
}

/* Claims len bytes of ln in p's current generation by compare-and-swap,
 * counted in inflight. Returns 0, -ENOSPC when it does not fit (full; *gen
 * says in which generation), or -EAGAIN while a checkpoint has the log
 * closed. */
static int try_claim(struct log_space *p, struct sfs_lane *ln, uint64_t len, uint64_t *off,
		     uint64_t *seq, uint64_t *gen)
{
	/* Counted before the look at `closed` (both seq_cst): a checkpoint
	 * that closes the log after this look waits for the record. */
	atomic_fetch_add(&p->inflight, 1);
	if (atomic_load(&p->closed)) {
		atomic_fetch_sub(&p->inflight, 1);
		return -EAGAIN;
	}
	*gen = atomic_load(&p->gen); /* stable while counted */
	uint64_t t = atomic_load(&ln->tail);
	while (t + len <= p->size) {
		if (atomic_compare_exchange_weak(&ln->tail, &t, t + len)) {
			*off = t;
			*seq = atomic_fetch_add(&p->seq, 1);
			return 0;
		}
	}
	atomic_fetch_sub(&p->inflight, 1);
	return -ENOSPC;
}

/* Starts a new generation, unless one has started since gen. */
static int next_generation(uint64_t gen)
{
	ops->relink_held(); /* the checkpoint may need those */
	sfs_mutex_lock(&L.ckpt_lock);
	int rc = atomic_load(&L.slot->gen) == gen ? checkpoint(false) : 0;
	sfs_mutex_unlock(&L.ckpt_lock);
	return rc;
}

/* Claims len bytes in a lane of this process's log set (*lane, counted in
 * its writers until the caller has written the record), checkpointing when
 * that lane is full. */
static int claim(uint64_t len, struct sfs_lane **lane, uint64_t *off, uint64_t *seq, uint64_t *gen)
{
	if (len > L.size - SFS_LOG_RECORDS_OFF)
		return -E2BIG;
	struct sfs_lane_set set = {L.set, atomic_load(&L.slot->gen), L.size};
	struct sfs_lane *ln = sfs_lane_pick(&set);
	int rc;
	for (;;) {
		rc = try_claim(L.slot, ln, len, off, seq, gen);
		if (rc == 0) {
			*lane = ln;
			return 0;
		}
		if (rc == -EAGAIN) {
			if (atomic_load(&L.closed)) {
				rc = -ENOTSUP; /* the process is exiting: no log now */
				break;
			}
			ops->relink_held(); /* the checkpoint may need those */
			sched_yield();	    /* another thread is checkpointing */
			continue;
		}
		if (rc != -ENOSPC)
			break;
		/* Full in generation *gen: unless another thread has moved
		 * on from it meanwhile, this one does. */
		rc = next_generation(*gen);
		if (rc)
			break;
	}
	atomic_fetch_sub(&ln->writers, 1);
	return rc;
}

/* The in-flight slot of this thread's write being applied, or -1. */
static __thread int my_slot __attribute__((tls_model("initial-exec"))) = -1;

/* Strict mode: marks the write of record (gen, seq) as being applied to its
 * file (format.h), until sfs_oplog_done. No slot free: not marked (the
 * write is then only as atomic as the kernel's write; 128 threads writing
 * at once). */
static void mark_inflight(uint32_t file, uint64_t gen, uint64_t seq)
{
	if (!L.inflight)
		return;
	static atomic_uint hint;
	unsigned start = atomic_fetch_add_explicit(&hint, 1, memory_order_relaxed);
	for (unsigned k = 0; k < SFS_LOG_INFLIGHT_SLOTS; k++) {
		unsigned i = (start + k) % SFS_LOG_INFLIGHT_SLOTS;
		uint32_t idle = SFS_INFLIGHT_IDLE;
		if (!atomic_compare_exchange_strong(&L.inflight[i].state, &idle,
						    SFS_INFLIGHT_CLAIMED))
			continue;
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		L.inflight[i].file = file;
		L.inflight[i].gen = gen;
		L.inflight[i].seq = seq;
		L.inflight[i].started_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
		atomic_store_explicit(&L.inflight[i].state, SFS_INFLIGHT_APPLYING,
				      memory_order_release);
		my_slot = (int)i;
		return;
	}
}

void sfs_oplog_done(void)
{
	if (my_slot >= 0) {
		atomic_store_explicit(&L.inflight[my_slot].state, SFS_INFLIGHT_IDLE,
				      memory_order_release);
		my_slot = -1;
	}
	atomic_fetch_sub(&L.slot->inflight, 1);
}

/* One record (claims, writes, counts). The ticket stays held when keep. */
static int append(struct sfs_log_entry *e, const struct iovec *iov, int cnt, bool keep)
{
	struct sfs_lane *ln;
	uint64_t off, seq, gen;
	int rc = claim(sfs_log_record_len(e->payload), &ln, &off, &seq, &gen);
	if (rc)
		return rc;
	e->version = 1;
	e->gen = gen;
	e->seq = seq;
	e->pid = (uint64_t)sfs_self_pid();
	e->set = L.set;
	rc = sfs_logfile_write_record(ln->fd, ln->pm.addr ? &ln->pm : NULL, e, iov, cnt, off);
	atomic_fetch_sub(&ln->writers, 1);
	sfs_stat_event(SFS_EV_log_records, 1);
	if (rc || !keep)
		sfs_oplog_done();
	return rc;
}

/* The FILE record binding an id to the inode, once per generation. Caller
 * holds the inode lock. */
static int bind_file(struct sfs_oplog_file *lf, int kfd, ino_t ino)
{
	uint64_t gen = atomic_load(&L.slot->gen);
	if (lf->gen == gen && lf->id)
		return 0;
	struct {
		struct file_handle h;
		unsigned char bytes[MAX_HANDLE_SZ];
	} fh;
	fh.h.handle_bytes = MAX_HANDLE_SZ;
	int mount_id;
	if (name_to_handle_at(kfd, "", &fh.h, &mount_id, AT_EMPTY_PATH) != 0)
		fh.h.handle_bytes = 0, fh.h.handle_type = 0;
	char path[PATH_MAX + 64], proc[48];
	snprintf(proc, sizeof(proc), "/proc/thread-self/fd/%d", kfd);
	ssize_t pl = readlink(proc, path, PATH_MAX);
	if (pl < 0)
		pl = 0;
	path[pl] = '\0';
	unsigned int igen = 0;
	SFS_REAL(ioctl)(kfd, FS_IOC_GETVERSION, &igen);
	/* Ids carry the generation's low bits (recovery matches a COMMIT to
	 * its binding within one generation only). */
	uint32_t n = atomic_fetch_add(&L.next_file, 1);
	if (n > 0xffff) { /* ids of this generation used up: start the next */
		int rc = next_generation(gen);
		return rc ? rc : bind_file(lf, kfd, ino);
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
		.off = (uint64_t)ino,
		.arg = igen,
	};
	int rc = append(&e, v, 2, false);
	if (rc)
		return rc;
	/* The file's records are in a newer generation than a COMMIT another
	 * process might add for an older binding. */
	if (e.gen != gen)
		return bind_file(lf, kfd, ino); /* a checkpoint ran meanwhile */
	/* Atomic, id first: sfs_oplog_write_bound reads them without the
	 * inode lock, gen first. */
	__atomic_store_n(&lf->id, id, __ATOMIC_RELAXED);
	__atomic_store_n(&lf->gen, gen, __ATOMIC_RELEASE);
	return 0;
}

/* The WRITE_TIMED record of n bytes at off for file id, bound in
 * generation gen, with the time now (format.h), its ticket kept
 * (sfs_oplog_done). -ESTALE: a checkpoint moved to a new generation
 * between the binding and the claim, so the record names a dead id (its
 * ticket given back): the caller binds and writes again. */
static int write_record(struct sfs_oplog_file *lf, uint32_t id, uint64_t gen,
			const struct iovec *iov, int cnt, size_t n, int64_t off, int64_t size_after)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct sfs_log_mtime t = {now.tv_sec, now.tv_nsec};
	struct iovec v[MAX_IOV + 1];
	v[0] = (struct iovec){&t, sizeof(t)};
	memcpy(v + 1, iov, (size_t)cnt * sizeof(*iov));
	struct sfs_log_entry e = {
		.op = SFS_LOG_WRITE_TIMED,
		.payload = (uint32_t)(sizeof(t) + n),
		.file = id,
		.off = (uint64_t)off,
		.arg = (uint64_t)size_after,
	};
	atomic_store(&lf->logged, true);
	int rc = append(&e, v, cnt + 1, true);
	if (rc)
		return rc;
	if (e.gen != gen) {
		sfs_oplog_done();
		return -ESTALE;
	}
	mark_inflight(e.file, e.gen, e.seq);
	sfs_stat_event(SFS_EV_log_bytes, n);
	return 0;
}

/* Tries of one write that each found a checkpoint between its binding and
 * its record, before the write is refused as too big for the log. */
#define STALE_TRIES 8

/* Whether a dead record of n bytes, a new binding and the record again
 * cannot all fit in one generation of the log. */
static bool too_big_to_retry(size_t n)
{
	uint64_t bind_max =
		sfs_log_record_len(sizeof(struct file_handle) + MAX_HANDLE_SZ + PATH_MAX);
	return SFS_LOG_RECORDS_OFF + 2 * sfs_log_record_len((uint32_t)n) + bind_max > L.size;
}

int sfs_oplog_write(struct sfs_oplog_file *lf, int kfd, ino_t ino, const struct iovec *iov, int cnt,
		    size_t n, int64_t off, int64_t size_after)
{
	if (atomic_load(&L.closed))
		return -ENOTSUP;
	int rc = ready();
	if (rc)
		return rc;
	if (cnt > MAX_IOV || n > UINT32_MAX - sizeof(struct sfs_log_mtime))
		return -E2BIG;
	/* A record the claim could only fit by checkpointing lies dead at the
	 * start of the new generation (-ESTALE). A record that cannot fit
	 * again behind itself and its new binding would go round forever
	 * (each try's claim checkpoints again: a 10 MB write with a 16 MiB
	 * log, LevelDB's db_test): it starts a generation of its own before
	 * the next try. Other threads' records can still take the room: after
	 * STALE_TRIES the write is refused as too big (the caller writes it
	 * durably, not atomically). */
	for (int tries = 0; tries < STALE_TRIES; tries++) {
		if (tries > 0 && too_big_to_retry(n + sizeof(struct sfs_log_mtime))) {
			rc = next_generation(atomic_load(&L.slot->gen));
			if (rc)
				return rc;
		}
		rc = bind_file(lf, kfd, ino);
		if (rc)
			return rc;
		rc = write_record(lf, lf->id, lf->gen, iov, cnt, n, off, size_after);
		if (rc != -ESTALE)
			return rc;
	}
	return -E2BIG;
}

int sfs_oplog_write_bound(struct sfs_oplog_file *lf, const struct iovec *iov, int cnt, size_t n,
			  int64_t off, int64_t size_after)
{
	if (atomic_load(&L.closed) || !__atomic_load_n(&L.opened, __ATOMIC_ACQUIRE) ||
	    cnt > MAX_IOV || n > UINT32_MAX - sizeof(struct sfs_log_mtime))
		return -EAGAIN;
	uint64_t gen = __atomic_load_n(&lf->gen, __ATOMIC_ACQUIRE);
	uint32_t id = __atomic_load_n(&lf->id, __ATOMIC_RELAXED);
	if (!id || gen != atomic_load(&L.slot->gen))
		return -EAGAIN; /* not bound in this generation: the locked path binds */
	int rc = write_record(lf, id, gen, iov, cnt, n, off, size_after);
	return rc == -ESTALE ? -EAGAIN : rc; /* binding again takes the lock */
}

int sfs_oplog_ready(void)
{
	return atomic_load(&L.closed) ? -ENOTSUP : ready();
}

int sfs_oplog_truncate(struct sfs_oplog_file *lf, int kfd, ino_t ino, int64_t size)
{
	int rc = ready();
	if (rc)
		return -ENOTSUP; /* the truncation is synced instead (metadata: atomic) */
	rc = bind_file(lf, kfd, ino);
	if (rc)
		return rc;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct sfs_log_entry e = {.op = SFS_LOG_TRUNCATE,
				  .file = lf->id,
				  .off = (uint64_t)size,
				  .arg = (uint64_t)now.tv_sec * 1000000000u +
					 (uint64_t)now.tv_nsec};
	lf->logged = true;
	return append(&e, NULL, 0, false);
}

bool sfs_oplog_live(const struct sfs_oplog_file *lf)
{
	return atomic_load(&lf->logged) && __atomic_load_n(&L.opened, __ATOMIC_ACQUIRE) &&
	       lf->gen == atomic_load(&L.slot->gen);
}

/* The file's live records written into it again (rewrite.h); none when
 * it has none in this generation (older ones are dead: durable). */
static int rewrite_file(const struct sfs_oplog_file *lf, int kfd)
{
	if (!__atomic_load_n(&L.opened, __ATOMIC_ACQUIRE) || !lf->id ||
	    lf->gen != atomic_load(&L.slot->gen))
		return 0;
	sfs_stat_event(SFS_EV_log_rewrites, 1);
	return sfs_log_rewrite(lf->id, lf->gen, L.set, kfd);
}

int sfs_oplog_sync_file(struct sfs_oplog_file *lf, int kfd)
{
	for (;;) {
		int failed = atomic_load(&lf->wb_error);
		if (failed) {
			int rc = rewrite_file(lf, kfd);
			if (rc)
				return rc;
		}
		if (SFS_REAL(fdatasync)(kfd) == 0) {
			atomic_store(&lf->wb_error, 0);
			return 0;
		}
		int err = -errno;
		atomic_store(&lf->wb_error, err);
		if (failed)
			return err; /* failed again with the records written back */
	}
}

int sfs_oplog_commit(struct sfs_oplog_file *lf, int kfd)
{
	if (!lf->logged)
		return 0;
	int rc = sfs_oplog_sync_file(lf, kfd);
	if (rc)
		return rc;
	if (!__atomic_load_n(&L.opened, __ATOMIC_ACQUIRE) || checkpointing) {
		lf->logged = false; /* no log, so no records of it */
		return 0;
	}
	uint64_t gen = atomic_load(&L.slot->gen);
	if (lf->gen == gen && lf->id) { /* older generations' records are dead already */
		struct sfs_log_entry e = {.op = SFS_LOG_COMMIT, .file = lf->id};
		rc = append(&e, NULL, 0, false);
	}
	if (!rc)
		lf->logged = false;
	return rc;
}

/* --- process end ------------------------------------------------------------ */

void sfs_oplog_close(bool final)
{
	if (!L.opened)
		return;
	/* Every file durable; then the set's records are dead and its logs
	 * can serve other processes. */
	atomic_store(&L.closed, true);
	sfs_mutex_lock(&L.ckpt_lock);
	int rc = checkpoint(true);
	sfs_mutex_unlock(&L.ckpt_lock);
	int dfd =
		rc ? -1 : SFS_REAL(openat)(sfs_privdir(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sfs_lanes_close(dfd);
	if (dfd >= 0)
		SFS_REAL(close)(dfd);
	if (L.inflight)
		munmap(L.inflight, SFS_LOG_RECORDS_OFF - SFS_LOG_INFLIGHT_OFF);
	L.inflight = NULL;
	L.opened = false;
	if (!final)
		atomic_store(&L.closed, false); /* an exec that fails goes on logging */
}

void sfs_oplog_reset_child(void)
{
	/* The parent's descriptor shares the flock: closing our copy keeps the
	 * parent's log locked. The child makes its own log when it writes. */
	sfs_lanes_reset_child();
	SFS_SET(L.inflight, NULL); /* not inherited (MADV_DONTFORK) */
	SFS_SET(my_slot, -1);
	SFS_SET(L.opened, false);
	SFS_SET(L.open_error, 0);
	SFS_SET(L.slot, NULL);
	sfs_mutex_reset_child(&L.open_lock);
	sfs_mutex_reset_child(&L.ckpt_lock);
}
