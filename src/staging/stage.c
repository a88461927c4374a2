/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "stage.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../init.h"
#include "../interpose/real.h"
#include "../util/compiler.h"
#include "../util/guard.h"
#include "pool.h"

int sfs_stage_attach(struct sfs_stage *st)
{
	if (st->kind != SFS_STAGE_NONE)
		return 0;
	bool file = sfs_g.opt.relink == SFS_RELINK_EXCHANGE || sfs_g.opt.relink == SFS_RELINK_CLONE;
	return sfs_staging_get(file ? SFS_STAGE_FILE : SFS_STAGE_RING, st);
}

void sfs_stage_detach(struct sfs_stage *st)
{
	if (st->kind == SFS_STAGE_NONE)
		return;
	if (st->kind == SFS_STAGE_FILE)
		sfs_map_drop_all(&st->maps);
	sfs_staging_put(st);
}

int sfs_stage_cover(struct sfs_stage *st, int64_t base, int64_t end)
{
	if (st->kind == SFS_STAGE_RING)
		return end - base <= st->cap ? 0 : -ENOSPC;
	if (end - base > (int64_t)sfs_g.opt.staging_size)
		return -ENOSPC; /* SPLITFS_STAGING_SIZE bounds a window */
	if (end <= st->cap)
		return 0;
	int64_t cap = SFS_ALIGN_UP(end, (int64_t)1 << sfs_g.map_shift);
	if (sfs_real.ftruncate(st->fd, cap) != 0)
		return -errno;
	st->cap = cap;
	return 0;
}

int64_t sfs_stage_fd_offset(int kind, int64_t cap, int64_t off, int64_t *contig)
{
	if (kind == SFS_STAGE_RING) {
		int64_t pos = off & (cap - 1);
		*contig = cap - pos;
		return pos;
	}
	*contig = INT64_MAX - off;
	return off;
}

/* The address of off and the contiguous bytes there (file: up to the end of
 * its chunk). NULL with *err when a file chunk cannot be mapped. */
static char *addr(struct sfs_stage *st, int64_t off, size_t *len, int *err)
{
	if (st->kind == SFS_STAGE_RING) {
		int64_t contig;
		int64_t pos = sfs_stage_fd_offset(st->kind, st->cap, off, &contig);
		*len = SFS_MIN(*len, (size_t)contig);
		return st->ring + pos;
	}
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	*len = SFS_MIN(*len, (size_t)(chunk - (off & (chunk - 1))));
	char *m = sfs_map_get(&st->maps, st->fd, (uint64_t)off, PROT_READ | PROT_WRITE, false, err);
	return m ? m + (off & (chunk - 1)) : NULL;
}

char *sfs_stage_peek(struct sfs_stage *st, int64_t off, size_t *len)
{
	if (st->kind == SFS_STAGE_RING) {
		int err;
		return addr(st, off, len, &err);
	}
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	*len = SFS_MIN(*len, (size_t)(chunk - (off & (chunk - 1))));
	char *m = sfs_map_peek(&st->maps, (uint64_t)off);
	return m ? m + (off & (chunk - 1)) : NULL;
}

int sfs_stage_xfer(struct sfs_stage *st, int64_t off, char *buf, size_t n, int to_stage)
{
	while (n > 0) {
		size_t len = n;
		int err = 0;
		char *p = addr(st, off, &len, &err);
		if (!p) {
			/* A file chunk the mapping budget does not allow. */
			ssize_t r = to_stage ? sfs_real.pwrite(st->fd, buf, len, off)
					     : sfs_real.pread(st->fd, buf, len, off);
			if (r != (ssize_t)len)
				return r < 0 ? -errno : -EIO;
		} else {
			int rc = to_stage ? sfs_guarded_copy(p, buf, len) : sfs_guarded_copy(buf, p, len);
			if (rc)
				return rc;
		}
		off += (int64_t)len;
		buf += len;
		n -= len;
	}
	return 0;
}

int sfs_stage_zero(struct sfs_stage *st, int64_t from, int64_t to)
{
	/* A staging file is truncated after every relink and grown sparse:
	 * its gaps already read as zeros. A ring holds older windows' bytes. */
	if (st->kind != SFS_STAGE_RING)
		return 0;
	static const char zeros[4096];
	while (from < to) {
		size_t len = (size_t)SFS_MIN(to - from, (int64_t)sizeof(zeros));
		int rc = sfs_stage_xfer(st, from, (char *)zeros, len, 1);
		if (rc)
			return rc;
		from += (int64_t)len;
	}
	return 0;
}

void sfs_stage_forget(struct sfs_stage *st)
{
	if (st->kind == SFS_STAGE_FILE)
		sfs_map_drop_all(&st->maps);
	else if (st->kind == SFS_STAGE_RING)
		munmap(st->ring, (size_t)st->cap);
	if (st->kind != SFS_STAGE_NONE)
		sfs_internal_close(st->fd);
	st->kind = SFS_STAGE_NONE;
	st->fd = -1;
}

void sfs_stage_empty(struct sfs_stage *st)
{
	if (st->kind == SFS_STAGE_FILE && sfs_real.ftruncate(st->fd, 0) == 0)
		st->cap = 0;
}
