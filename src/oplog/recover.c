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
#include "../util/names.h"

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

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

int sfs_mount_instance(const struct sfs_sys *sys, int dirfd, uint8_t boot_id[16], uint64_t *mnt_id)
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
	/* The unique mount id (Linux 6.8) is never reused; the old one may be
	 * after an unmount, but not while the file system stays mounted. */
	struct statx stx;
	memset(&stx, 0, sizeof(stx));
	if (sys->statx(dirfd, "", AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE | STATX_MNT_ID, &stx) != 0)
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

static bool valid(const struct sfs_log_entry *e, uint64_t gen, uint64_t room)
{
	return e->gen == gen && e->version == 1 && e->op >= SFS_LOG_FILE &&
	       e->op <= SFS_LOG_COMMIT && sfs_log_record_len(e->payload) <= room &&
	       e->crc == sfs_log_crc(e, e + 1);
}

/* An entry of this generation whose checksum fails: a record torn by the
 * crash, or damaged since. Counted (skipped), never applied. */
static bool corrupt(const struct sfs_log_entry *e, uint64_t gen, uint64_t room)
{
	return e->gen == gen && e->version == 1 && e->op >= SFS_LOG_FILE &&
	       e->op <= SFS_LOG_COMMIT && sfs_log_record_len(e->payload) <= room &&
	       e->crc != sfs_log_crc(e, e + 1);
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = (*(const struct sfs_log_entry *const *)a)->seq;
	uint64_t y = (*(const struct sfs_log_entry *const *)b)->seq;
	return x < y ? -1 : x > y;
}

/* Same mount: whether record e is a strict write that was in flight, and
 * its file has not changed since the write began (then it goes back). */
static bool in_flight(struct replay *r, const struct sfs_log_entry *e, int fd)
{
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
	if (e->op == SFS_LOG_WRITE) {
		const char *data = (const char *)(e + 1);
		for (uint32_t done = 0; done < e->payload && rc == 0;) {
			ssize_t w = sys->pwrite(f->fd, data + done, e->payload - done,
						(off_t)(e->off + done));
			if (w <= 0)
				rc = w < 0 ? errno : EIO;
			else
				done += (uint32_t)w;
		}
		r->rep->bytes += e->payload;
	} else if (e->op == SFS_LOG_TRUNCATE) {
		if (sys->ftruncate(f->fd, (off_t)e->off) != 0)
			rc = errno;
	}
	if (rc)
		note(r->rep, "replay", rc);
	else
		r->rep->records++;
}

/* Replays one log (mapped at m, len bytes). Returns the log's generation,
 * or 0 if it has no valid header (a log whose creation never finished). */
static uint64_t replay_log(struct replay *r, const unsigned char *m, uint64_t len)
{
	const struct sfs_log_entry *h = (const void *)m;
	if (len < SFS_LOG_RECORDS_OFF || h->op != SFS_LOG_HEADER)
		return 0;
	uint64_t first;
	if (h->off == SFS_LOG_MAGIC && h->payload == sizeof(struct sfs_log_ident) &&
	    h->crc == sfs_log_crc(h, h + 1)) {
		const struct sfs_log_ident *id = (const void *)(h + 1);
		r->same_mount = memcmp(id->boot_id, r->env->boot_id, 16) == 0 &&
				id->mnt_id == r->env->mnt_id;
		r->inflight = (const void *)(m + SFS_LOG_INFLIGHT_OFF);
		first = SFS_LOG_RECORDS_OFF;
	} else if (h->off == SFS_LOG_MAGIC_V1 && h->crc == sfs_log_crc(h, NULL)) {
		r->same_mount = false; /* an older version's log: replayed whole */
		first = SFS_LOG_UNIT;
	} else {
		return 0;
	}
	uint64_t gen = h->gen;
	size_t n = 0, cap = 1024;
	const struct sfs_log_entry **recs = malloc(cap * sizeof(*recs));
	/* Records are self-checking: anything that is not a valid record of
	 * this generation (a torn one, a gap left by a thread that died before
	 * writing its claimed space, an older generation) is stepped over 64
	 * bytes at a time. */
	for (uint64_t p = first; recs && p + SFS_LOG_UNIT <= len;) {
		const struct sfs_log_entry *e = (const void *)(m + p);
		if (!valid(e, gen, len - p)) {
			if (corrupt(e, gen, len - p))
				r->rep->skipped++;
			p += SFS_LOG_UNIT;
			continue;
		}
		if (n == cap) {
			const struct sfs_log_entry **more = realloc(recs, 2 * cap * sizeof(*recs));
			if (!more)
				break;
			recs = more;
			cap *= 2;
		}
		recs[n++] = e;
		p += sfs_log_record_len(e->payload);
	}
	if (!recs)
		return gen;
	qsort(recs, n, sizeof(*recs), by_seq);
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
		if (recs[i]->op == SFS_LOG_WRITE || recs[i]->op == SFS_LOG_TRUNCATE)
			apply(r, recs[i]);
	/* Every file with live records durable before the records die (on the
	 * same mount too: what the page cache holds would not survive a crash
	 * once the log is gone). */
	for (size_t i = 0; i < r->nfiles; i++) {
		struct rfile *f = &r->files[i]; /* opened by apply: live records */
		if (f->fd >= 0) {
			if (r->env->sys->fsync(f->fd) != 0)
				note(r->rep, "fsync", errno);
			r->env->sys->close(f->fd);
		}
	}
	free(recs);
	r->nfiles = 0;
	return gen;
}

void sfs_log_retire(const struct sfs_sys *sys, int dirfd, const char *name, const char *freed,
		    uid_t uid)
{
	int scan = sys->openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = scan >= 0 ? fdopendir(scan) : NULL;
	int kept = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		struct stat st;
		if (strncmp(de->d_name, "log.free.", 9) == 0 &&
		    sys->fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_uid == uid)
			kept++;
	}
	if (d)
		closedir(d);
	else if (scan >= 0)
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

/* Replays the log named name in dirfd if its owner is dead, then kills its
 * records and renames it for reuse. */
static void recover_one(struct replay *r, int dirfd, const char *name)
{
	const struct sfs_sys *sys = r->env->sys;
	int fd = sys->openat(dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno != ENOENT && errno != EACCES && errno != EPERM)
			note(r->rep, name, errno); /* a read-only file system, ... */
		return;
	}
	struct stat st;
	if (sys->fstat(fd, &st) != 0 || !trusted(r->env, &st) ||
	    sys->flock(fd, LOCK_EX | LOCK_NB) != 0) { /* another user's, or its process lives */
		sys->close(fd);
		return;
	}
	r->log_uid = st.st_uid;
	void *m = sys->mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED) {
		uint64_t gen = replay_log(r, m, (uint64_t)st.st_size);
		munmap(m, (size_t)st.st_size);
		r->rep->logs++;
		/* The next generation kills every record; only then the log may
		 * serve another process. */
		struct {
			struct sfs_log_entry e;
			struct sfs_log_ident id;
		} h;
		memset(&h, 0, sizeof(h));
		h.e.op = SFS_LOG_HEADER;
		h.e.version = 1;
		h.e.payload = sizeof(h.id);
		h.e.gen = gen + 1;
		h.e.off = SFS_LOG_MAGIC;
		h.e.arg = (uint64_t)st.st_size;
		memcpy(h.id.boot_id, r->env->boot_id, 16);
		h.id.mnt_id = r->env->mnt_id;
		h.e.crc = sfs_log_crc(&h.e, &h.id);
		if (sys->pwrite(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		    sys->fsync(fd) == 0) {
			char freed[96];
			snprintf(freed, sizeof(freed), "log.free.r%d.%s", (int)getpid(), name + 4);
			sfs_log_retire(sys, dirfd, name, freed, st.st_uid);
		} else {
			note(r->rep, name, errno);
		}
	}
	sys->close(fd);
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
	int scan = env->sys->dup(dirfd);
	DIR *d = scan >= 0 ? fdopendir(scan) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL)
		if (sfs_recover_is_log(de->d_name))
			sfs_names_add(&logs, de->d_name);
	if (d)
		closedir(d);
	sfs_recover_names(env, dirfd, logs.v, logs.n, rep);
	sfs_names_free(&logs);
	env->sys->close(dirfd);
	return 0;
}
