/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "rewrite.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "../sys/real.h"
#include "../util/compiler.h"
#include "format.h"
#include "lanes.h"

/* Bytes read and written back at a time. */
#define CHUNK (64u << 10)
#define PAGE 4096u

struct found {
	struct sfs_log_entry **recs; /* copies of the file's WRITE records */
	size_t n, cap;
	uint64_t commit_seq; /* its last COMMIT: records before it are durable */
};

/* Keeps a copy of record e (gen), checked again once copied: a
 * checkpoint that ran meanwhile (a file's close syncing outside one) may
 * have reused its place in the log. */
static int add(struct found *f, const struct sfs_log_entry *e, uint64_t gen)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 256;
		struct sfs_log_entry **r = realloc(f->recs, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		f->recs = r;
		f->cap = cap;
	}
	uint64_t len = sfs_log_record_len(e->payload);
	struct sfs_log_entry *c = malloc(len);
	if (!c)
		return -ENOMEM;
	memcpy(c, e, len);
	if (!sfs_log_record_valid(c, gen, len)) {
		free(c);
		return 0;
	}
	f->recs[f->n++] = c;
	return 0;
}

/* The file's records in one log mapped at m, claimed up to tail. Records
 * other threads are writing now (other files') fail their checksum and
 * are stepped over, 64 bytes at a time, as recovery does. */
static int scan(struct found *f, const unsigned char *m, uint64_t tail, uint32_t id, uint64_t gen,
		uint64_t set)
{
	for (uint64_t p = SFS_LOG_RECORDS_OFF; p + SFS_LOG_UNIT <= tail;) {
		const struct sfs_log_entry *e = (const void *)(m + p);
		if (!sfs_log_record_valid(e, gen, tail - p) || e->set != set) {
			p += SFS_LOG_UNIT;
			continue;
		}
		p += sfs_log_record_len(e->payload);
		if (e->file != id)
			continue;
		if (e->op == SFS_LOG_COMMIT && e->seq > f->commit_seq)
			f->commit_seq = e->seq;
		else if ((e->op == SFS_LOG_WRITE || e->op == SFS_LOG_WRITE_TIMED) && add(f, e, gen))
			return -ENOMEM;
	}
	return 0;
}

/* Writes [off, end) of the file again: what the page cache holds where it
 * holds it (a read that would wait for the media, RWF_NOWAIT, says it does
 * not), else the record's bytes (data holds those of off). */
static int put_back(int kfd, const unsigned char *data, uint64_t off, uint64_t end,
		    unsigned char *buf)
{
	for (uint64_t pos = off; pos < end;) {
		struct iovec v = {buf, SFS_MIN(end - pos, (uint64_t)CHUNK)};
		ssize_t r = SFS_REAL(preadv2)(kfd, &v, 1, (off_t)pos, RWF_NOWAIT);
		if (r == 0)
			return 0; /* the file is shorter now */
		const unsigned char *src = buf;
		size_t n = (size_t)r;
		if (r < 0) { /* dropped (or the read would wait): this page from the record */
			n = (size_t)(SFS_MIN(end, SFS_ALIGN_UP(pos + 1, (uint64_t)PAGE)) - pos);
			src = data + (pos - off);
		}
		ssize_t w = SFS_REAL(pwrite)(kfd, src, n, (off_t)pos);
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		pos += (uint64_t)w;
	}
	return 0;
}

static int put_back_all(int kfd, struct found *f, uint64_t size)
{
	unsigned char *buf = malloc(CHUNK);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < f->n && rc == 0; i++) {
		const struct sfs_log_entry *e = f->recs[i];
		if (e->seq < f->commit_seq)
			continue;
		const unsigned char *data = (const unsigned char *)(e + 1);
		uint64_t len = e->payload;
		if (e->op == SFS_LOG_WRITE_TIMED) { /* its time first (format.h) */
			if (len < sizeof(struct sfs_log_mtime))
				continue;
			data += sizeof(struct sfs_log_mtime);
			len -= sizeof(struct sfs_log_mtime);
		}
		if (e->off < size)
			rc = put_back(kfd, data, e->off, SFS_MIN(e->off + len, size), buf);
	}
	free(buf);
	return rc;
}

int sfs_log_rewrite(uint32_t id, uint64_t gen, uint64_t set, int kfd)
{
	struct stat st;
	if (SFS_REAL(fstat)(kfd, &st) != 0)
		return -errno;
	unsigned nl;
	struct sfs_lane *lanes = sfs_lanes_open(&nl);
	struct found f = {0};
	void *maps[SFS_LOG_LANES] = {0};
	uint64_t lens[SFS_LOG_LANES] = {0};
	int rc = 0;
	for (unsigned k = 0; k < nl && rc == 0; k++) {
		lens[k] = atomic_load(&lanes[k].tail);
		const unsigned char *m = (const unsigned char *)lanes[k].pm.addr;
		if (!m) {
			maps[k] = SFS_REAL(mmap)(NULL, lens[k], PROT_READ, MAP_SHARED, lanes[k].fd,
						 0);
			if (maps[k] == MAP_FAILED) {
				maps[k] = NULL;
				rc = -errno;
				break;
			}
			m = maps[k];
		}
		rc = scan(&f, m, lens[k], id, gen, set);
	}
	if (rc == 0) {
		/* In the order they were written: where two overlap, the later
		 * one's bytes go back. */
		qsort(f.recs, f.n, sizeof(*f.recs), sfs_log_entry_by_seq);
		rc = put_back_all(kfd, &f, (uint64_t)st.st_size);
	}
	/* The writes above are the library's, not the program's. */
	struct timespec t[2] = {{.tv_nsec = UTIME_OMIT}, st.st_mtim};
	if (f.n && SFS_REAL(futimens)(kfd, t) != 0 && rc == 0)
		rc = -errno;
	for (unsigned k = 0; k < nl; k++)
		if (maps[k])
			munmap(maps[k], lens[k]);
	for (size_t i = 0; i < f.n; i++)
		free(f.recs[i]);
	free(f.recs);
	return rc;
}
