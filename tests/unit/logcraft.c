/* SPDX-License-Identifier: Apache-2.0 */
/* Description: crafting operation logs for the recovery tests (logcraft.h). */
#define _GNU_SOURCE
#include "logcraft.h"
#include "../../cli/libc_sys.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const uint8_t lc_boot[16] = {0xb0, 0x07, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
const uint8_t lc_crash_boot[16] = {0xb0, 0x07, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 99};

static bool alloc(struct lc_log *l, size_t len, uint64_t gen)
{
	l->m = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!l->m)
		return false;
	memset(l->m, 0, len);
	l->len = len;
	l->gen = gen;
	l->set = 0;
	return true;
}

bool lc_new(struct lc_log *l, size_t len, uint64_t gen, const uint8_t boot[16], uint64_t mnt)
{
	if (!alloc(l, len, gen))
		return false;
	lc_set(l, boot, mnt, 0, 0);
	return true;
}

void lc_set(struct lc_log *l, const uint8_t boot[16], uint64_t mnt, uint64_t set, uint64_t lane)
{
	struct sfs_log_ident id = {.mnt_id = mnt, .set = set, .lane = lane};
	memcpy(id.boot_id, boot, 16);
	l->set = set;
	l->at = 0;
	lc_add(l,
	       (struct sfs_log_entry){.op = SFS_LOG_HEADER,
				      .payload = sizeof(id),
				      .off = SFS_LOG_MAGIC,
				      .arg = l->len},
	       &id);
	l->at = SFS_LOG_RECORDS_OFF;
}

bool lc_new_v1(struct lc_log *l, size_t len, uint64_t gen)
{
	if (!alloc(l, len, gen))
		return false;
	l->at = 0;
	lc_add(l, (struct sfs_log_entry){.op = SFS_LOG_HEADER, .off = SFS_LOG_MAGIC_V1, .arg = len},
	       NULL);
	return true;
}

void lc_free(struct lc_log *l)
{
	free(l->m);
	l->m = NULL;
}

size_t lc_add(struct lc_log *l, struct sfs_log_entry e, const void *payload)
{
	size_t at = l->at;
	e.version = 1;
	if (!e.gen)
		e.gen = l->gen;
	if (!e.set && e.op != SFS_LOG_HEADER)
		e.set = l->set;
	e.crc = 0;
	e.crc = sfs_log_crc(&e, payload);
	memcpy(l->m + at, &e, sizeof(e));
	if (e.payload)
		memcpy(l->m + at + SFS_LOG_UNIT, payload, e.payload);
	l->at += (size_t)sfs_log_record_len(e.payload);
	return at;
}

size_t lc_file(struct lc_log *l, uint32_t id, uint64_t seq, const char *path, uint64_t ino,
	       uint64_t igen)
{
	unsigned char p[LC_PATH + 8] = {0}; /* struct file_handle, no bytes; then the path */
	size_t n = strlen(path) + 1;
	memcpy(p + 8, path, n);
	return lc_add(l,
		      (struct sfs_log_entry){.op = SFS_LOG_FILE,
					     .payload = (uint32_t)(8 + n),
					     .file = id,
					     .seq = seq,
					     .off = ino,
					     .arg = igen},
		      p);
}

size_t lc_write(struct lc_log *l, uint32_t id, uint64_t seq, uint64_t off, const char *data)
{
	uint32_t n = (uint32_t)strlen(data);
	return lc_add(l,
		      (struct sfs_log_entry){.op = SFS_LOG_WRITE,
					     .payload = n,
					     .file = id,
					     .seq = seq,
					     .off = off,
					     .arg = off + n},
		      data);
}

void lc_inflight(struct lc_log *l, int slot, uint32_t state, uint64_t seq, int64_t started_ns)
{
	struct sfs_log_inflight *s =
		(struct sfs_log_inflight *)(l->m + SFS_LOG_INFLIGHT_OFF) + slot;
	atomic_store(&s->state, state);
	s->file = 1;
	s->gen = l->gen;
	s->seq = seq;
	s->started_ns = started_ns;
}

int lc_save(const struct lc_log *l, const char *dir, const char *name, mode_t mode)
{
	char p[LC_PATH];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	int rc = pwrite(fd, l->m, l->len, 0) == (ssize_t)l->len && fchmod(fd, mode) == 0 ? 0 : -1;
	close(fd);
	return rc;
}

bool lc_target(const char *dir, const char *name, const char *content, char *path, uint64_t *ino,
	       uint64_t *igen)
{
	snprintf(path, LC_PATH, "%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	size_t n = strlen(content);
	struct stat st;
	unsigned int g = 0;
	ioctl(fd, FS_IOC_GETVERSION, &g); /* fails on tmpfs: 0, as in recovery */
	bool ok = pwrite(fd, content, n, 0) == (ssize_t)n && fstat(fd, &st) == 0;
	close(fd);
	*ino = (uint64_t)st.st_ino;
	*igen = g;
	return ok;
}

const char *lc_read(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		return "<error>";
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = '.'; /* a hole from an extending truncate */
	return buf;
}

bool lc_exists(const char *dir, const char *name)
{
	char p[LC_PATH];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	struct stat st;
	return lstat(p, &st) == 0;
}

int lc_count(const char *dir, const char *prefix)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL)
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	if (d)
		closedir(d);
	return n;
}

struct sfs_recover_env lc_env(const char *dir)
{
	struct sfs_recover_env env = {
		.sys = &cli_libc_sys, .mnt_id = LC_MNT, .euid = geteuid(), .root_fd = -1};
	memcpy(env.boot_id, lc_boot, 16);
	struct stat st;
	if (stat(dir, &st) == 0)
		env.root_dev = st.st_dev;
	return env;
}

int64_t lc_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
