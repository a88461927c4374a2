/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/dirscan.h"
#include "../util/options.h"
#include "../util/pagereport.h"
#include "../util/stats.h"
#include "pieces.h"
#include "relink.h"

/* Writes the window [base, size) to the target at the same offsets: pwrite
 * straight from the store's mapping (one copy, into the page cache), or
 * through a bounce buffer for a staging-file chunk that is not mapped.
 *
 * At most a chunk a call, aligned in the file: the page cache sizes a
 * write's folios by the write, and a folio of 2^n pages starts at a
 * multiple of its size (a 256 KiB piece that started 64 KiB past a
 * boundary made 64 KiB folios, and a reader of the file's mappings took a
 * fault per 64 KiB instead of one per 256 KiB). 2 MiB pieces make 2 MiB
 * folios, which a reader's 2 MiB-aligned chunk mapping maps with one PMD
 * entry: 128 MiB appended in 4 KiB writes, fsynced, then read and
 * overwritten in order (Fig. 4, statistics off), 272-287 / 270-289 ns an op
 * against 333-341 / 345-348 with 256 KiB pieces (MadFS: 276-284 /
 * 316-319). A later 4 KiB store can then dirty 2 MiB: small_syncs
 * (fs/flush.c) already counts every run of stores as dirtying a 2 MiB folio
 * at each end. But where the host takes back the guest's free memory
 * (util/pagereport.h) a free 2 MiB block is one it took back, and the
 * first store into it faults in the host: 6 of 12 Fig. 4 runs here then
 * relinked 160 MiB in 205 ms instead of 12 (compact_stall stayed 0); with
 * 256 KiB pieces none of 8 did, nor 2 MiB pieces with reporting off (0 of
 * 12). So 256 KiB there, 2 MiB elsewhere, and smaller where pieces copy
 * slowly all the same (relink/pieces.h: 1 GiB relinked in 256 KiB pieces
 * took 1-2 s instead of 45 ms in some runs here).
 * On DAX (sync/strict modes on pmem stage their appends, fs/logged.c) there
 * are no folios: a whole contiguous piece a call. */
#define COPY_CHUNK ((int64_t)2 << 20)
#define COPY_CHUNK_REPORTED ((int64_t)256 << 10)
#define COPY_CHUNK_DAX ((int64_t)64 << 20)

/* The text of a small sysfs file, or NULL. */
static const char *read_text(const char *path, char *buf, size_t size)
{
	return sfs_kernel_read_text(path, buf, size) > 0 ? buf : NULL;
}

#define BALLOONS "/sys/bus/virtio/drivers/virtio_balloon"
#define MAX_BALLOONS 4

/* Whether the host takes back free memory: read once, at the first copy
 * that could use a 2 MiB piece (not at every program's start). */
static bool host_takes_free_memory(void)
{
	static atomic_int known; /* 0: not yet, 1: no, 2: yes */
	int k = atomic_load_explicit(&known, memory_order_relaxed);
	if (k)
		return k == 2;
	char order[32], feats[MAX_BALLOONS][160];
	const char *texts[MAX_BALLOONS];
	int n = 0;
	const char *ord = read_text("/sys/module/page_reporting/parameters/page_reporting_order",
				    order, sizeof(order));
	int dfd = ord ? SFS_REAL(open)(BALLOONS, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dfd >= 0) {
		struct sfs_dirscan scan;
		sfs_dirscan_start(&scan, dfd, sfs_kernel_getdents64);
		const struct dirent64 *e;
		while (n < MAX_BALLOONS && (e = sfs_dirscan_next(&scan)) != NULL) {
			if (strncmp(e->d_name, "virtio", 6) != 0)
				continue;
			char path[sizeof(BALLOONS) + 300];
			snprintf(path, sizeof(path), BALLOONS "/%s/features", e->d_name);
			texts[n] = read_text(path, feats[n], sizeof(feats[n]));
			if (texts[n])
				n++;
		}
		SFS_REAL(close)(dfd);
	}
	bool on = sfs_page_reporting_on(ord, texts, n);
	atomic_store_explicit(&known, on ? 2 : 1, memory_order_relaxed);
	return on;
}

static struct sfs_pieces pieces;

static int copy_commit(const struct sfs_relink_target *t, int64_t base, int64_t size)
{
	char bounce[4096];
	int64_t ceiling = t->dax		   ? COPY_CHUNK_DAX :
			  size - base < COPY_CHUNK ? COPY_CHUNK_REPORTED :
			  host_takes_free_memory() ? COPY_CHUNK_REPORTED :
						     COPY_CHUNK;
	bool adapt = !t->dax; /* DAX has no folios to size */
	for (int64_t off = base; off < size;) {
		int64_t chunk = adapt ? sfs_pieces_size(&pieces, ceiling) : ceiling;
		size_t len = (size_t)SFS_MIN(size - off, chunk - (off & (chunk - 1)));
		const char *src = sfs_stage_peek(t->stage, off, &len);
		if (!src) {
			len = SFS_MIN(len, sizeof(bounce));
			int rc = sfs_stage_xfer(t->stage, off, bounce, len, 0);
			if (rc)
				return rc;
			src = bounce;
		}
		uint64_t start = adapt ? sfs_now_ns() : 0;
		ssize_t w = SFS_REAL(pwrite)(t->kfd, src, len, off);
		if (adapt && w > 0 &&
		    sfs_pieces_note(&pieces, (int64_t)w, (int64_t)(sfs_now_ns() - start)))
			sfs_stat_event(SFS_EV_relink_pieces_lowered, 1);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		sfs_stat_event(SFS_EV_relink_pieces, 1); /* a pwrite each */
		off += w;
	}
	return 0;
}

const struct sfs_relink_ops sfs_relink_copy = {
	.name = "copy",
	.kind = SFS_RELINK_COPY,
	.commit = copy_commit,
};
