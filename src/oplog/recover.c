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

/* What replay knows of one file id. */
struct rfile {
	uint32_t id;
	uint64_t commit_seq;	  /* records up to here are in the file */
	const struct sfs_log_entry *bind; /* its FILE record */
	int fd;			  /* opened on first use; -1 not yet, -2 not found */
};

struct replay {
	const char *root;
	const struct sfs_sys *sys;
	int root_fd;
	struct sfs_recovery *rep;
	struct rfile *files;
	size_t nfiles, cap;
};

static void note(struct sfs_recovery *rep, const char *what, int err)
{
	if (!rep->first_error[0])
		snprintf(rep->first_error, sizeof(rep->first_error), "%s: %s", what, strerror(err));
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

/* Opens the file a FILE record names: by handle, else by path if the inode
 * number and generation still match. */
static int open_bound(struct replay *r, const struct sfs_log_entry *b)
{
	const unsigned char *p = (const unsigned char *)(b + 1);
	const struct file_handle *h = (const struct file_handle *)p;
	size_t hlen = sizeof(*h) + h->handle_bytes;
	if (hlen > b->payload)
		return -1;
	const char *path = (const char *)p + hlen;
	if (h->handle_bytes) {
		int fd = open_by_handle_at(r->root_fd, (struct file_handle *)h, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	if (!memchr(path, '\0', b->payload - hlen))
		return -1;
	int fd = r->sys->open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	struct stat st;
	unsigned int igen = 0;
	r->sys->ioctl(fd, FS_IOC_GETVERSION, &igen);
	if (r->sys->fstat(fd, &st) != 0 || st.st_ino != (ino_t)b->off || (b->arg && igen != b->arg)) {
		r->sys->close(fd); /* renamed, or the name now names another file */
		return -1;
	}
	return fd;
}

static bool valid(const struct sfs_log_entry *e, uint64_t gen, uint64_t room)
{
	return e->gen == gen && e->version == 1 && e->op >= SFS_LOG_FILE && e->op <= SFS_LOG_COMMIT &&
	       sfs_log_record_len(e->payload) <= room && e->crc == sfs_log_crc(e, e + 1);
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = (*(const struct sfs_log_entry *const *)a)->seq;
	uint64_t y = (*(const struct sfs_log_entry *const *)b)->seq;
	return x < y ? -1 : x > y;
}

/* Applies one record. */
static void apply(struct replay *r, const struct sfs_log_entry *e)
{
	struct rfile *f = rfile(r, e->file, false);
	if (!f || !f->bind || e->seq <= f->commit_seq)
		return;
	if (f->fd == -1) {
		f->fd = open_bound(r, f->bind);
		if (f->fd < 0)
			f->fd = -2;
		else
			r->rep->files++;
	}
	if (f->fd < 0) {
		r->rep->skipped++;
		return;
	}
	int rc = 0;
	if (e->op == SFS_LOG_WRITE) {
		const char *data = (const char *)(e + 1);
		for (uint32_t done = 0; done < e->payload && rc == 0;) {
			ssize_t w = r->sys->pwrite(f->fd, data + done, e->payload - done,
						   (off_t)(e->off + done));
			if (w <= 0)
				rc = w < 0 ? errno : EIO;
			else
				done += (uint32_t)w;
		}
		r->rep->bytes += e->payload;
	} else if (e->op == SFS_LOG_TRUNCATE) {
		if (r->sys->ftruncate(f->fd, (off_t)e->off) != 0)
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
	if (len < SFS_LOG_UNIT || h->op != SFS_LOG_HEADER || h->off != SFS_LOG_MAGIC ||
	    h->crc != sfs_log_crc(h, NULL))
		return 0;
	uint64_t gen = h->gen;
	size_t n = 0, cap = 1024;
	const struct sfs_log_entry **recs = malloc(cap * sizeof(*recs));
	/* Records are self-checking: anything that is not a valid record of
	 * this generation (a torn one, a gap left by a thread that died before
	 * writing its claimed space, an older generation) is stepped over 64
	 * bytes at a time. */
	for (uint64_t p = SFS_LOG_UNIT; recs && p + SFS_LOG_UNIT <= len;) {
		const struct sfs_log_entry *e = (const void *)(m + p);
		if (!valid(e, gen, len - p)) {
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
	for (size_t i = 0; i < r->nfiles; i++) {
		if (r->files[i].fd >= 0) {
			if (r->sys->fsync(r->files[i].fd) != 0)
				note(r->rep, "fsync", errno);
			r->sys->close(r->files[i].fd);
		}
	}
	free(recs);
	r->nfiles = 0;
	return gen;
}

/* Replays the log named name in dirfd if its owner is dead, then kills its
 * records and renames it for reuse. */
static void recover_one(struct replay *r, int dirfd, const char *name)
{
	int fd = r->sys->openat(dirfd, name, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) { /* its process is alive */
		r->sys->close(fd);
		return;
	}
	struct stat st;
	void *m = MAP_FAILED;
	if (r->sys->fstat(fd, &st) == 0 && st.st_size > 0)
		m = r->sys->mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED) {
		uint64_t gen = replay_log(r, m, (uint64_t)st.st_size);
		munmap(m, (size_t)st.st_size);
		r->rep->logs++;
		/* The next generation kills every record; only then the log may
		 * serve another process. */
		struct sfs_log_entry h = {.op = SFS_LOG_HEADER, .version = 1, .gen = gen + 1,
					  .off = SFS_LOG_MAGIC, .arg = (uint64_t)st.st_size};
		h.crc = sfs_log_crc(&h, NULL);
		if (r->sys->pwrite(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		    r->sys->fsync(fd) == 0) {
			char freed[96];
			snprintf(freed, sizeof(freed), "log.free.r%d.%s", (int)getpid(), name + 4);
			r->sys->renameat(dirfd, name, dirfd, freed);
		}
	}
	r->sys->close(fd);
}

int sfs_recover_dir(const char *root, const char *priv_dir, const struct sfs_sys *sys,
		    struct sfs_recovery *rep)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(rep, 0, sizeof(*rep));
	int dirfd = sys->open(priv_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct replay r = {.root = root, .sys = sys, .rep = rep};
	r.root_fd = sys->open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int scan = sys->dup(dirfd);
	DIR *d = scan >= 0 ? fdopendir(scan) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "log.", 4) == 0 && strncmp(de->d_name, "log.free.", 9) != 0)
			recover_one(&r, dirfd, de->d_name);
	if (d)
		closedir(d);
	if (r.root_fd >= 0)
		sys->close(r.root_fd);
	sys->close(dirfd);
	free(r.files);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rep->ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(t1.tv_nsec - t0.tv_nsec);
	return 0;
}
