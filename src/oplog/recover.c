/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "recover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "../util/dirscan.h"
#include "../util/names.h"

/* The largest log recovery reads (SPLITFS_LOG_SIZE's upper bound). */
#define LOG_MAX (16ull << 30)

/* A strict write in flight on the same mount is replayed unless its file
 * changed more than this after the write began (a later change by
 * someone else is never written over; the write itself takes less). */
#define INFLIGHT_SLACK_NS (1000ll * 1000 * 1000)

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int sfs_boot_id(const struct sfs_sys *sys, uint8_t boot_id[16])
{
	memset(boot_id, 0, 16);
	int fd = sys->open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char text[64];
	ssize_t n = sys->pread(fd, text, sizeof(text) - 1, 0);
	sys->close(fd);
	if (n <= 0)
		return -EIO;
	text[n] = '\0';
	int k = 0;
	for (char *p = text; *p && k < 32; p++) {
		int v = hexval(*p);
		if (v < 0)
			continue;
		boot_id[k / 2] = (uint8_t)(boot_id[k / 2] << 4 | v);
		k++;
	}
	return 0;
}

int sfs_mount_instance(const struct sfs_sys *sys, int dirfd, uint8_t boot_id[16], uint64_t *mnt_id)
{
	int rc = sfs_boot_id(sys, boot_id);
	if (rc)
		return rc;
	struct statx stx;
	memset(&stx, 0, sizeof(stx));
	if (sys->statx(dirfd, "", AT_EMPTY_PATH, SFS_STATX_MOUNT, &stx) != 0)
		return -errno;
	*mnt_id = stx.stx_mnt_id;
	return 0;
}

/* What replay knows of one file id. */
struct rfile {
	uint32_t id;
	uint64_t commit_seq;		  /* records up to here are in the file */
	const struct sfs_log_entry *bind; /* its FILE record */
	int fd;				  /* opened on first use; -1 not yet, -2 not found */
	/* The time its last applied record gives back (none: the replay's). */
	bool timed;
	struct timespec mtime;
};

struct replay {
	const struct sfs_recover_env *env;
	uid_t log_uid;
	struct sfs_recovery *rep;
	struct rfile *files;
	size_t nfiles, cap;
	/* Same mount: only these records (strict writes in flight) go back. */
	bool same_mount;
	const struct sfs_log_inflight *inflight;
};

static void note(struct sfs_recovery *rep, const char *what, int err)
{
	if (!rep->first_error[0]) {
		int n = snprintf(rep->first_error, sizeof(rep->first_error), "%.120s", what);
		snprintf(rep->first_error + n, sizeof(rep->first_error) - (size_t)n, ": %s",
			 strerror(err));
	}
}

static struct rfile *rfile(struct replay *r, uint32_t id, bool create)
{
	for (size_t i = 0; i < r->nfiles; i++)
		if (r->files[i].id == id)
			return &r->files[i];
	if (!create)
		return NULL;
	if (r->nfiles == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct rfile *f = realloc(r->files, cap * sizeof(*f));
		if (!f)
			return NULL;
		r->files = f;
		r->cap = cap;
	}
	r->files[r->nfiles] = (struct rfile){.id = id, .fd = -1};
	return &r->files[r->nfiles++];
}

/* Opens the file a FILE record names, by handle, else by path, and checks
 * it is the file bound then (inode, generation, this file system) and its
 * owner may have written it (the log's user, or the log is root's). */
static int open_bound(struct replay *r, const struct sfs_log_entry *b)
{
	const struct sfs_sys *sys = r->env->sys;
	const unsigned char *p = (const unsigned char *)(b + 1);
	const struct file_handle *h = (const struct file_handle *)p;
	size_t hlen = sizeof(*h) + h->handle_bytes;
	if (hlen > b->payload)
		return -1;
	const char *path = (const char *)p + hlen;
	int fd = -1;
	if (h->handle_bytes && r->env->root_fd >= 0)
		fd = open_by_handle_at(r->env->root_fd, (struct file_handle *)h,
				       O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && memchr(path, '\0', b->payload - hlen) && path[0] == '/')
		fd = sys->open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	unsigned int igen = 0;
	sys->ioctl(fd, FS_IOC_GETVERSION, &igen);
	if (sys->fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != r->env->root_dev ||
	    st.st_ino != (ino_t)b->off || igen != (unsigned int)b->arg ||
	    (r->log_uid != 0 && st.st_uid != r->log_uid)) {
		sys->close(fd); /* renamed over, another file, not the log owner's */
		return -1;
	}
	return fd;
}

/* An entry of this generation whose checksum fails: a record torn by the
 * crash, or damaged since. Counted (skipped), never applied. */
static bool corrupt(const struct sfs_log_entry *e, uint64_t gen, uint64_t room)
{
	return sfs_log_record_framed(e, gen, room) && e->crc != sfs_log_crc(e, e + 1);
}

/* Same mount: whether record e is a strict write that was in flight, and
 * its file has not changed since the write began (then it goes back). */
static bool in_flight(struct replay *r, const struct sfs_log_entry *e, int fd)
{
	if (!r->inflight)
		return false;
	for (int i = 0; i < SFS_LOG_INFLIGHT_SLOTS; i++) {
		const struct sfs_log_inflight *s = &r->inflight[i];
		if (atomic_load(&s->state) != SFS_INFLIGHT_APPLYING || s->gen != e->gen ||
		    s->seq != e->seq)
			continue;
		struct stat st;
		if (r->env->sys->fstat(fd, &st) != 0)
			return false;
		int64_t ctime = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
		return ctime <= s->started_ns + INFLIGHT_SLACK_NS;
	}
	return false;
}

/* Opens the file of record e once; NULL when it cannot be. */
static struct rfile *file_of(struct replay *r, const struct sfs_log_entry *e)
{
	struct rfile *f = rfile(r, e->file, false);
	if (!f || !f->bind)
		return NULL;
	if (f->fd == -1) {
		f->fd = open_bound(r, f->bind);
		if (f->fd < 0)
			f->fd = -2;
		else
			r->rep->files++;
	}
	return f->fd >= 0 ? f : NULL;
}

/* Applies one record. */
static void apply(struct replay *r, const struct sfs_log_entry *e)
{
	struct rfile *known = rfile(r, e->file, false);
	if (!known || !known->bind || e->seq <= known->commit_seq)
		return;
	struct rfile *f = file_of(r, e);
	if (!f) {
		/* Gone, or another file by now. After a crash its records are
		 * lost (counted); on the same mount they were in its page
		 * cache, which went with it. */
		if (!r->same_mount)
			r->rep->skipped++;
		return;
	}
	if (r->same_mount && !in_flight(r, e, f->fd))
		return; /* in the page cache already, or changed since */
	const struct sfs_sys *sys = r->env->sys;
	int rc = 0;
	if (e->op == SFS_LOG_WRITE || e->op == SFS_LOG_WRITE_TIMED) {
		const char *data = (const char *)(e + 1);
		uint32_t len = e->payload;
		struct sfs_log_mtime t = {0, -1};
		if (e->op == SFS_LOG_WRITE_TIMED) {
			if (len < sizeof(t)) {
				note(r->rep, "replay", EINVAL);
				return;
			}
			memcpy(&t, data, sizeof(t));
			data += sizeof(t);
			len -= (uint32_t)sizeof(t);
		}
		for (uint32_t done = 0; done < len && rc == 0;) {
			ssize_t w =
				sys->pwrite(f->fd, data + done, len - done, (off_t)(e->off + done));
			if (w <= 0)
				rc = w < 0 ? errno : EIO;
			else
				done += (uint32_t)w;
		}
		r->rep->bytes += len;
		f->timed = t.nsec >= 0 && t.nsec < 1000000000;
		f->mtime = (struct timespec){(time_t)t.sec, (long)t.nsec};
	} else if (e->op == SFS_LOG_TRUNCATE) {
		if (sys->ftruncate(f->fd, (off_t)e->off) != 0)
			rc = errno;
		/* arg: the time in ns (older logs: 0, none). */
		f->timed = e->arg != 0 && e->arg <= INT64_MAX;
		f->mtime = (struct timespec){(time_t)(e->arg / 1000000000),
					     (long)(e->arg % 1000000000)};
	}
	if (rc)
		note(r->rep, "replay", rc);
	else
		r->rep->records++;
}

/* A log's header, as recovery reads it. */
struct log_head {
	uint64_t gen;	 /* its generation (a lane's: not the set's) */
	uint64_t first;	 /* where its records begin */
	uint64_t set;	 /* its set's nonce (0: a log without lanes) */
	uint64_t lane;	 /* 0: a main log; k: lane k */
	bool same_mount; /* written on this boot and mount */
	bool has_ident;	 /* a v2 header (with boot, mount, set) */
};

/* Reads the header of the log mapped at m (len bytes); false if it has
 * none (a log whose creation never finished). */
static bool read_head(const struct replay *r, const unsigned char *m, uint64_t len,
		      struct log_head *hd)
{
	const struct sfs_log_entry *h = (const void *)m;
	if (len < SFS_LOG_RECORDS_OFF || h->op != SFS_LOG_HEADER)
		return false;
	memset(hd, 0, sizeof(*hd));
	hd->gen = h->gen;
	if (h->off == SFS_LOG_MAGIC && h->payload == sizeof(struct sfs_log_ident) &&
	    h->crc == sfs_log_crc(h, h + 1)) {
		const struct sfs_log_ident *id = (const void *)(h + 1);
		hd->same_mount = memcmp(id->boot_id, r->env->boot_id, 16) == 0 &&
				 id->mnt_id == r->env->mnt_id;
		hd->first = SFS_LOG_RECORDS_OFF;
		hd->set = id->set;
		hd->lane = id->lane;
		hd->has_ident = true;
		return true;
	}
	if (h->off == SFS_LOG_MAGIC_V1 && h->crc == sfs_log_crc(h, NULL)) {
		hd->first = SFS_LOG_UNIT; /* an older version's log: replayed whole */
		return true;
	}
	return false;
}

/* The records in one file of a set (mapped at m, len bytes, records from
 * first) that are live in the set: generation gen, nonce set. Added to
 * *recs (n of cap). false if out of memory. */
static bool collect(struct replay *r, const unsigned char *m, uint64_t len, uint64_t first,
		    uint64_t gen, uint64_t set, const struct sfs_log_entry ***recs, size_t *n,
		    size_t *cap)
{
	/* Records are self-checking: anything that is not a valid record of
	 * this generation (a torn one, a gap left by a thread that died before
	 * writing its claimed space, an older generation) is stepped over 64
	 * bytes at a time. */
	for (uint64_t p = first; p + SFS_LOG_UNIT <= len;) {
		const struct sfs_log_entry *e = (const void *)(m + p);
		if (!sfs_log_record_valid(e, gen, len - p) || e->set != set) {
			if (corrupt(e, gen, len - p))
				r->rep->skipped++;
			p += SFS_LOG_UNIT;
			continue;
		}
		if (*n == *cap) {
			const struct sfs_log_entry **more =
				realloc(*recs, 2 * *cap * sizeof(**recs));
			if (!more)
				return false;
			*recs = more;
			*cap *= 2;
		}
		(*recs)[(*n)++] = e;
		p += sfs_log_record_len(e->payload);
	}
	return true;
}

/* Replays a log set: its main log (mapped at m, len bytes, header hd) and
 * its lanes (nl of them, mapped at lm[i], ll[i] bytes). Records of every
 * file go back in the order of their numbers, whichever lane holds them. */
static void replay_set(struct replay *r, const unsigned char *m, uint64_t len,
		       const struct log_head *hd, const unsigned char *const *lm,
		       const uint64_t *ll, unsigned nl)
{
	r->same_mount = hd->same_mount;
	r->inflight = hd->has_ident ? (const void *)(m + SFS_LOG_INFLIGHT_OFF) : NULL;
	size_t n = 0, cap = 1024;
	const struct sfs_log_entry **recs = malloc(cap * sizeof(*recs));
	bool ok = recs && collect(r, m, len, hd->first, hd->gen, hd->set, &recs, &n, &cap);
	for (unsigned i = 0; ok && i < nl; i++)
		ok = collect(r, lm[i], ll[i], SFS_LOG_RECORDS_OFF, hd->gen, hd->set, &recs, &n,
			     &cap);
	if (!recs)
		return;
	qsort(recs, n, sizeof(*recs), sfs_log_entry_by_seq);
	for (size_t i = 0; i < n; i++) { /* bindings and commits first */
		struct rfile *f = rfile(r, recs[i]->file, true);
		if (!f)
			continue;
		if (recs[i]->op == SFS_LOG_FILE)
			f->bind = recs[i];
		else if (recs[i]->op == SFS_LOG_COMMIT && recs[i]->seq > f->commit_seq)
			f->commit_seq = recs[i]->seq;
	}
	for (size_t i = 0; i < n; i++)
		if (recs[i]->op == SFS_LOG_WRITE || recs[i]->op == SFS_LOG_WRITE_TIMED ||
		    recs[i]->op == SFS_LOG_TRUNCATE)
			apply(r, recs[i]);
	/* Every file with live records durable before the records die (on the
	 * same mount too: what the page cache holds would not survive a crash
	 * once the log is gone). */
	for (size_t i = 0; i < r->nfiles; i++) {
		struct rfile *f = &r->files[i]; /* opened by apply: live records */
		/* The file's time as its last record had it, over the replay's. */
		struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, f->mtime};
		if (f->fd >= 0 && f->timed && r->env->sys->futimens(f->fd, times) != 0)
			note(r->rep, "futimens", errno);
		if (f->fd >= 0) {
			if (r->env->sys->fsync(f->fd) != 0)
				note(r->rep, "fsync", errno);
			r->env->sys->close(f->fd);
		}
	}
	free(recs);
	r->nfiles = 0;
}

void sfs_log_retire(const struct sfs_sys *sys, int dirfd, const char *name, const char *freed,
		    uid_t uid)
{
	int scan = sys->openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct sfs_dirscan names;
	sfs_dirscan_start(&names, scan, sys->getdents64);
	int kept = 0;
	const struct dirent64 *de;
	while ((de = sfs_dirscan_next(&names)) != NULL) {
		struct stat st;
		if (strncmp(de->d_name, "log.free.", 9) == 0 &&
		    sys->fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_uid == uid)
			kept++;
	}
	if (scan >= 0)
		sys->close(scan);
	if (kept < SFS_FREE_LOGS_KEPT)
		sys->renameat(dirfd, name, dirfd, freed);
	else
		sys->unlinkat(dirfd, name, 0);
}

/* Whether fd may be a log of the caller's: a regular, private file with
 * one link, owned by the caller (root recovering for all: anyone), of a
 * sane size, allocated
 * (a log is zero-filled when made; a sparse one is a plant, and reading it
 * would cost a scan of nothing). */
static bool trusted(const struct sfs_recover_env *env, const struct stat *st)
{
	return S_ISREG(st->st_mode) &&
	       (st->st_uid == env->euid || (env->euid == 0 && env->all_users)) &&
	       !(st->st_mode & 077) && st->st_nlink == 1 && st->st_size >= SFS_LOG_RECORDS_OFF &&
	       (uint64_t)st->st_size <= LOG_MAX &&
	       (uint64_t)st->st_blocks * 512 + (1 << 20) >= (uint64_t)st->st_size;
}

/* A log file of a dead process's, opened, checked and mapped. */
struct dead_log {
	int fd;
	struct stat st;
	unsigned char *m;
	bool of_set; /* a lane: its header names the set being recovered */
};

/* Opens dir/name: 1 when it is trusted, locked (its process is dead) and
 * mapped; 0 when there is none or it is not the caller's to recover; -1
 * when it is locked by a live process. */
static int open_dead(struct replay *r, int dirfd, const char *name, struct dead_log *d)
{
	const struct sfs_sys *sys = r->env->sys;
	d->m = NULL;
	d->fd = sys->openat(dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (d->fd < 0) {
		if (errno != ENOENT && errno != EACCES && errno != EPERM)
			note(r->rep, name, errno); /* a read-only file system, ... */
		return 0;
	}
	int rc = 0;
	if (sys->fstat(d->fd, &d->st) != 0 || !trusted(r->env, &d->st))
		goto out; /* another user's */
	rc = -1;
	if (sys->flock(d->fd, LOCK_EX | LOCK_NB) != 0)
		goto out; /* its process lives */
	rc = 0;
	void *m = sys->mmap(NULL, (size_t)d->st.st_size, PROT_READ, MAP_SHARED, d->fd, 0);
	if (m == MAP_FAILED)
		goto out;
	d->m = m;
	return 1;
out:
	sys->close(d->fd);
	d->fd = -1;
	return rc;
}

static void close_dead(const struct replay *r, struct dead_log *d)
{
	if (d->m)
		munmap(d->m, (size_t)d->st.st_size);
	if (d->fd >= 0)
		r->env->sys->close(d->fd);
	d->m = NULL;
	d->fd = -1;
}

/* Replays the log set whose main log is named name in dirfd if its owner is
 * dead, then kills its records and renames its logs for reuse. */
static void recover_one(struct replay *r, int dirfd, const char *name)
{
	const struct sfs_sys *sys = r->env->sys;
	struct dead_log main_log, lanes[SFS_LOG_LANES - 1];
	char lane_names[SFS_LOG_LANES - 1][300];
	unsigned nl = 0;
	struct log_head hd;
	if (open_dead(r, dirfd, name, &main_log) <= 0)
		return;
	r->log_uid = main_log.st.st_uid;
	bool has_head = read_head(r, main_log.m, (uint64_t)main_log.st.st_size, &hd);
	/* Its lanes (format.h): each of the main log's user, of its set, at
	 * its number. A lane still locked: the set's process (or a child that
	 * inherited its descriptors) lives, leave the whole set for later. A
	 * lane of another set (taken, then its header could not be written)
	 * holds no record of this one: retired with the set. */
	for (unsigned k = 1; has_head && hd.set && k < SFS_LOG_LANES; k++) {
		sfs_log_lane_name(lane_names[nl], sizeof(lane_names[nl]), name, k);
		struct dead_log *ln = &lanes[nl];
		int rc = open_dead(r, dirfd, lane_names[nl], ln);
		if (rc < 0)
			goto out;
		if (rc == 0)
			continue;
		struct log_head lh;
		ln->of_set = ln->st.st_uid == main_log.st.st_uid &&
			     read_head(r, ln->m, (uint64_t)ln->st.st_size, &lh) &&
			     lh.set == hd.set && lh.lane == k;
		nl++;
	}
	if (has_head) {
		const unsigned char *lm[SFS_LOG_LANES - 1];
		uint64_t ll[SFS_LOG_LANES - 1];
		unsigned live = 0;
		for (unsigned i = 0; i < nl; i++)
			if (lanes[i].of_set) {
				lm[live] = lanes[i].m;
				ll[live++] = (uint64_t)lanes[i].st.st_size;
			}
		replay_set(r, main_log.m, (uint64_t)main_log.st.st_size, &hd, lm, ll, live);
	}
	r->rep->logs++;
	/* The next generation kills every record of the set; only then its
	 * logs may serve other processes, the lanes first (a lane's name never
	 * outlives its main log's). */
	struct {
		struct sfs_log_entry e;
		struct sfs_log_ident id;
	} h;
	memset(&h, 0, sizeof(h));
	h.e.op = SFS_LOG_HEADER;
	h.e.version = 1;
	h.e.payload = sizeof(h.id);
	h.e.gen = (has_head ? hd.gen : 0) + 1;
	h.e.off = SFS_LOG_MAGIC;
	h.e.arg = (uint64_t)main_log.st.st_size;
	memcpy(h.id.boot_id, r->env->boot_id, 16);
	h.id.mnt_id = r->env->mnt_id;
	h.e.crc = sfs_log_crc(&h.e, &h.id);
	if (sys->pwrite(main_log.fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    sys->fsync(main_log.fd) == 0) {
		char freed[320];
		for (unsigned i = 0; i < nl; i++) {
			snprintf(freed, sizeof(freed), "log.free.r%d.%s", (int)getpid(),
				 lane_names[i] + 5);
			sfs_log_retire(sys, dirfd, lane_names[i], freed, main_log.st.st_uid);
		}
		snprintf(freed, sizeof(freed), "log.free.r%d.%s", (int)getpid(), name + 4);
		sfs_log_retire(sys, dirfd, name, freed, main_log.st.st_uid);
	} else {
		note(r->rep, name, errno);
	}
out:
	for (unsigned i = 0; i < nl; i++)
		close_dead(r, &lanes[i]);
	close_dead(r, &main_log);
}

bool sfs_recover_is_log(const char *name)
{
	return strncmp(name, "log.", 4) == 0 && strncmp(name, "log.free.", 9) != 0;
}

void sfs_recover_names(const struct sfs_recover_env *env, int dirfd, char *const *names, size_t n,
		       struct sfs_recovery *rep)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(rep, 0, sizeof(*rep));
	struct replay r = {.env = env, .rep = rep};
	for (size_t i = 0; i < n; i++)
		if (sfs_recover_is_log(names[i]))
			recover_one(&r, dirfd, names[i]);
	free(r.files);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rep->ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u +
		  (uint64_t)(t1.tv_nsec - t0.tv_nsec);
}

int sfs_recover_dir(const struct sfs_recover_env *env, const char *priv_dir,
		    struct sfs_recovery *rep)
{
	memset(rep, 0, sizeof(*rep));
	int dirfd = env->sys->open(priv_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct sfs_names logs = {0};
	struct sfs_dirscan names;
	sfs_dirscan_start(&names, dirfd, env->sys->getdents64);
	const struct dirent64 *de;
	while ((de = sfs_dirscan_next(&names)) != NULL)
		if (sfs_recover_is_log(de->d_name))
			sfs_names_add(&logs, de->d_name);
	sfs_recover_names(env, dirfd, logs.v, logs.n, rep);
	sfs_names_free(&logs);
	env->sys->close(dirfd);
	return 0;
}
