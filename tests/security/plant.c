/* SPDX-License-Identifier: Apache-2.0 */
/* Description: an attacker's tool for tests/suites/security.sh: plants in
 * <root>/.splitfs what another user could, as convincingly as the formats
 * allow (valid checksums, this mount's ids), so that the suite can show the
 * library refuses it.
 *
 *   plant log PATH TARGET INO IGEN   an operation log (old format: replayed
 *                                    whole) writing "PWNED!" at offset 0 of
 *                                    TARGET (inode INO, generation IGEN)
 *   plant store PATH TARGET DEV INO BASE   an open staging window of TARGET
 *                                    (st_dev DEV, inode INO, size BASE)
 *                                    holding "PWNED!", on this mount
 *   plant free PATH SIZE             a zero-filled free log, mode 0666
 *   plant sparse PATH SIZE           a sparse file of SIZE, mode 0600 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/oplog/format.h"
#include "../../src/oplog/recover.h"
#include "../../src/staging/format.h"

static int fail(const char *what)
{
	perror(what);
	return 2;
}

static int put(int fd, const void *p, size_t n, off_t off)
{
	return pwrite(fd, p, n, off) == (ssize_t)n ? 0 : -1;
}

static int zeros(int fd, off_t size)
{
	static char z[1 << 16];
	for (off_t off = 0; off < size; off += (off_t)sizeof(z))
		if (put(fd, z,
			(size_t)(size - off < (off_t)sizeof(z) ? size - off : (off_t)sizeof(z)),
			off) != 0)
			return -1;
	return 0;
}

static int plant_log(const char *path, const char *target, uint64_t ino, uint64_t igen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || zeros(fd, 1 << 20) != 0)
		return fail(path);
	struct sfs_log_entry h = {.op = SFS_LOG_HEADER,
				  .version = 1,
				  .gen = 1,
				  .off = SFS_LOG_MAGIC_V1,
				  .arg = 1 << 20};
	h.crc = sfs_log_crc(&h, NULL);
	/* FILE: a file handle of no bytes, then the path. */
	unsigned char rec[512];
	memset(rec, 0, sizeof(rec));
	struct sfs_log_entry *f = (void *)rec;
	size_t plen = strlen(target) + 1;
	*f = (struct sfs_log_entry){.op = SFS_LOG_FILE,
				    .version = 1,
				    .file = 1,
				    .gen = 1,
				    .seq = 1,
				    .off = ino,
				    .arg = igen};
	f->payload = (uint32_t)(8 + plen); /* struct file_handle header: 8 bytes */
	memcpy(rec + SFS_LOG_UNIT + 8, target, plen);
	f->crc = sfs_log_crc(f, rec + SFS_LOG_UNIT);
	unsigned char wrec[128];
	memset(wrec, 0, sizeof(wrec));
	struct sfs_log_entry *w = (void *)wrec;
	*w = (struct sfs_log_entry){.op = SFS_LOG_WRITE,
				    .version = 1,
				    .file = 1,
				    .gen = 1,
				    .seq = 2,
				    .off = 0,
				    .arg = 6,
				    .payload = 6};
	memcpy(wrec + SFS_LOG_UNIT, "PWNED!", 6);
	w->crc = sfs_log_crc(w, wrec + SFS_LOG_UNIT);
	if (put(fd, &h, sizeof(h), 0) || put(fd, rec, (size_t)sfs_log_record_len(f->payload), 64) ||
	    put(fd, wrec, (size_t)sfs_log_record_len(w->payload),
		64 + (off_t)sfs_log_record_len(f->payload)))
		return fail(path);
	return close(fd) == 0 ? 0 : fail(path);
}

static int plant_store(const char *path, const char *target, uint64_t dev, uint64_t ino,
		       uint64_t base)
{
	static struct sfs_store_hdr h;
	const struct sfs_sys sys = {.open = open, .pread = pread, .close = close, .statx = statx};
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	char *slash = strrchr(path, '/');
	if (slash) {
		char d[4096];
		snprintf(d, sizeof(d), "%.*s", (int)(slash - path), path);
		close(dir);
		dir = open(d, O_RDONLY | O_DIRECTORY);
	}
	if (dir < 0 || sfs_mount_instance(&sys, dir, h.boot_id, &h.mnt_id) != 0)
		return fail("mount ids");
	uint64_t cap = 1 << 16;
	h.magic = SFS_STORE_MAGIC;
	h.version = 1;
	h.layout = SFS_STORE_RING;
	h.cap = cap;
	h.dev = dev;
	h.ino = ino;
	h.state = SFS_STORE_OPEN;
	h.base = base;
	h.size = base + 6;
	snprintf(h.path, sizeof(h.path), "%s", target);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	uint64_t contig;
	if (fd < 0 || zeros(fd, (off_t)(SFS_STORE_HDR + cap)) != 0 || put(fd, &h, sizeof(h), 0) ||
	    put(fd, "PWNED!", 6, (off_t)sfs_store_pos(SFS_STORE_RING, cap, base, &contig)))
		return fail(path);
	return close(fd) == 0 ? 0 : fail(path);
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "log") == 0)
		return plant_log(argv[2], argv[3], strtoull(argv[4], NULL, 0),
				 strtoull(argv[5], NULL, 0));
	if (argc == 7 && strcmp(argv[1], "store") == 0)
		return plant_store(argv[2], argv[3], strtoull(argv[4], NULL, 0),
				   strtoull(argv[5], NULL, 0), strtoull(argv[6], NULL, 0));
	if (argc == 4 && strcmp(argv[1], "free") == 0) {
		int fd = open(argv[2], O_RDWR | O_CREAT | O_EXCL, 0666);
		if (fd < 0 || fchmod(fd, 0666) != 0 || zeros(fd, (off_t)strtoll(argv[3], NULL, 0)))
			return fail(argv[2]);
		return close(fd) == 0 ? 0 : fail(argv[2]);
	}
	if (argc == 4 && strcmp(argv[1], "sparse") == 0) {
		int fd = open(argv[2], O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)strtoll(argv[3], NULL, 0)) != 0)
			return fail(argv[2]);
		return close(fd) == 0 ? 0 : fail(argv[2]);
	}
	fprintf(stderr, "usage: plant log|store|free|sparse ...\n");
	return 2;
}
