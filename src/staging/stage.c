/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "stage.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sys/global.h"
#include "../sys/self.h"
#include "../oplog/libsys.h"
#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/decname.h"
#include "../util/guard.h"
#include "../util/msg.h"
#include "../util/stats.h"
#include "adopt.h"
#include "census.h"
#include "pool.h"

int sfs_stage_attach(struct sfs_stage *st)
{
	if (st->kind != SFS_STAGE_NONE)
		return 0;
	bool file = sfs_g.opt.relink == SFS_RELINK_EXCHANGE || sfs_g.opt.relink == SFS_RELINK_CLONE;
	return sfs_staging_get(file ? SFS_STAGE_FILE : SFS_STAGE_RING, st);
}

/* name, and a file store's name.data beside it, renamed to to (and
 * to.data); flags: renameat2's. 0 or -errno; on failure nothing moved. */
static int rename_store(const char *name, const char *to, bool file, unsigned flags)
{
	char from_data[SFS_STORE_NAME_MAX + 16], to_data[SFS_STORE_NAME_MAX + 16];
	sfs_name_cat(from_data, sizeof(from_data), name, SFS_STORE_DATA);
	sfs_name_cat(to_data, sizeof(to_data), to, SFS_STORE_DATA);
	int d = sfs_privdir();
	if (file && SFS_REAL(renameat2)(d, from_data, d, to_data, flags) != 0)
		return -errno;
	if (SFS_REAL(renameat2)(d, name, d, to, flags) == 0)
		return 0;
	int err = errno;
	if (file)
		SFS_REAL(renameat2)(d, to_data, d, from_data, 0);
	return -err;
}

/* Unlinks name (and a file store's name.data); returns whether name is
 * gone. */
static bool unlink_store(const char *name, bool file)
{
	int d = sfs_privdir();
	bool gone = SFS_REAL(unlinkat)(d, name, 0) == 0 || errno == ENOENT;
	if (file) {
		char data[SFS_STORE_NAME_MAX + 16];
		sfs_name_cat(data, sizeof(data), name, SFS_STORE_DATA);
		SFS_REAL(unlinkat)(d, data, 0);
	}
	return gone;
}

/* This process's parked stores, as id << 1 | file (0: a free slot), so
 * that every way out of the process removes their names
 * (sfs_stage_unpark_all): after its end nobody else would but the next
 * library start of its user. Lock-free: the exit paths run in signal
 * handlers. */
#define MAX_PARKED (SFS_MAX_RINGS + 256)
SFS_HOT static _Atomic uint64_t parked_ids[MAX_PARKED];

static uint64_t parked_key(uint64_t id, bool file)
{
	return id << 1 | (file ? 1 : 0);
}

static bool remember_parked(uint64_t key)
{
	for (int i = 0; i < MAX_PARKED; i++) {
		uint64_t free_slot = 0;
		if (atomic_compare_exchange_strong(&parked_ids[i], &free_slot, key))
			return true;
	}
	return false;
}

static void forget_parked(uint64_t key)
{
	for (int i = 0; i < MAX_PARKED; i++) {
		uint64_t k = key;
		if (atomic_compare_exchange_strong(&parked_ids[i], &k, 0))
			return;
	}
}

void sfs_stage_unbind(struct sfs_stage *st)
{
	if (!st->bound)
		return;
	atomic_store(&st->hdr->state, SFS_STORE_EMPTY);
	/* Before the name goes: an adopter of a store that has this flag
	 * takes its count away (adopt.c), and this process does below. */
	st->hdr->census = 0;
	bool file = st->kind == SFS_STAGE_FILE;
	char name[SFS_STORE_NAME_MAX + 8], park[SFS_STORE_NAME_MAX + 8];
	sfs_store_name(name, sizeof(name), sfs_g.euid, st->dev, st->ino);
	if (!st->park_id) {
		struct stat hs;
		if (SFS_REAL(fstat)(st->hfd, &hs) == 0)
			st->park_id = (uint64_t)hs.st_ino;
	}
	sfs_store_park_name(park, sizeof(park), sfs_g.euid, st->park_id);
	/* NOREPLACE: a name another user planted (.splitfs is shared) stays
	 * theirs, and the store goes unnamed, spent. */
	uint64_t key = parked_key(st->park_id, file);
	if (st->park_id && remember_parked(key)) {
		if (rename_store(name, park, file, RENAME_NOREPLACE) == 0)
			st->parked = true;
		else
			forget_parked(key);
	}
	bool gone = st->parked;
	if (!st->parked) {
		gone = unlink_store(name, file);
		st->spent = true;
	}
	/* A name that stayed (unlinkat failed) keeps its count: the census
	 * errs high, never low. */
	if (gone)
		sfs_census_leave(st->census);
	st->census = 0;
	st->bound = false;
}

/* Unlinks the idle names of the store parked as id. */
static void unlink_parked(uint64_t id, bool file)
{
	char park[SFS_STORE_NAME_MAX + 8];
	sfs_store_park_name(park, sizeof(park), sfs_g.euid, id);
	unlink_store(park, file);
}

void sfs_stage_unpark(bool file, bool parked, uint64_t park_id)
{
	if (!parked)
		return;
	forget_parked(parked_key(park_id, file));
	unlink_parked(park_id, file);
}

void sfs_stage_unpark_all(void)
{
	for (int i = 0; i < MAX_PARKED; i++) {
		uint64_t key = atomic_exchange(&parked_ids[i], 0);
		if (key)
			unlink_parked(key >> 1, key & 1);
	}
}

void sfs_stage_reset_child(void)
{
	for (int i = 0; i < MAX_PARKED; i++)
		SFS_SET(parked_ids[i], 0); /* the parent's */
}

void sfs_stage_detach(struct sfs_stage *st)
{
	if (st->kind == SFS_STAGE_NONE)
		return;
	sfs_stage_unbind(st);
	if (st->kind == SFS_STAGE_FILE)
		sfs_map_drop_all(&st->maps);
	sfs_staging_put(st);
}

static int link_by_name(struct sfs_stage *st, int kfd, dev_t dev, ino_t ino, const char *name);

/* Writes the target's identity into the header and links the store as the
 * target's (format.h). A name left by a dead process of this user's that
 * nobody adopted yet is adopted first (its window belongs before ours). */
static int bind_store(struct sfs_stage *st, int kfd, dev_t dev, ino_t ino)
{
	if (st->bound && st->dev == dev && st->ino == ino)
		return 0;
	sfs_stage_unbind(st);
	if (st->spent)
		return -ESTALE; /* no name, and none to be had: the kernel writes */
	struct sfs_store_hdr *h = st->hdr;
	atomic_store(&h->state, SFS_STORE_EMPTY);
	atomic_store(&h->relinking, 0);
	memcpy(h->boot_id, sfs_g.boot_id, sizeof(h->boot_id));
	h->mnt_id = sfs_g.mnt_id;
	h->dev = (uint64_t)dev;
	h->ino = (uint64_t)ino;
	h->pid = (uint32_t)sfs_self_pid();
	unsigned int igen = 0;
	SFS_REAL(ioctl)(kfd, FS_IOC_GETVERSION, &igen);
	h->igen = igen;
	struct {
		struct file_handle fh;
		unsigned char bytes[sizeof(h->handle)];
	} fh;
	fh.fh.handle_bytes = sizeof(h->handle);
	int mount_id;
	if (name_to_handle_at(kfd, "", &fh.fh, &mount_id, AT_EMPTY_PATH) == 0) {
		h->handle_bytes = fh.fh.handle_bytes;
		h->handle_type = fh.fh.handle_type;
		memcpy(h->handle, fh.fh.f_handle, fh.fh.handle_bytes);
	} else {
		h->handle_bytes = 0;
	}
	char proc[48];
	snprintf(proc, sizeof(proc), "/proc/thread-self/fd/%d", kfd);
	ssize_t pl = readlink(proc, h->path, sizeof(h->path) - 1);
	h->path[pl > 0 ? pl : 0] = '\0';

	char name[SFS_STORE_NAME_MAX + 8];
	sfs_store_name(name, sizeof(name), sfs_g.euid, dev, ino);
	uint64_t census;
	int rc = sfs_census_enter(&census);
	if (rc)
		return rc;
	h->census = census; /* for whoever adopts it (adopt.c) */
	rc = link_by_name(st, kfd, dev, ino, name);
	if (rc) {
		sfs_census_leave(census);
		return rc;
	}
	st->census = census;
	st->bound = true;
	st->dev = dev;
	st->ino = ino;
	return 0;
}

/* Links the store (from its idle name, or its descriptors) as name, the
 * target's. 0 or -errno. */
static int link_by_name(struct sfs_stage *st, int kfd, dev_t dev, ino_t ino, const char *name)
{
	char proc[48];
	int priv = sfs_privdir();
	for (int attempt = 0;; attempt++) {
		if (st->parked) {
			/* From its idle name, the data with the header. */
			char park[SFS_STORE_NAME_MAX + 8];
			sfs_store_park_name(park, sizeof(park), sfs_g.euid, st->park_id);
			int rc = rename_store(park, name, st->kind == SFS_STAGE_FILE,
					      RENAME_NOREPLACE);
			/* ENOENT: its idle name was removed (sfs_stage_unpark_all
			 * before an exec that failed): spent. */
			if (rc == 0 || rc == -ENOENT) {
				st->parked = false;
				st->spent = rc != 0;
				forget_parked(parked_key(st->park_id, st->kind == SFS_STAGE_FILE));
			}
			if (rc == 0)
				break;
			if (rc != -EEXIST || attempt > 0)
				return rc;
			sfs_adopt_for_open(kfd, dev, ino, false);
			continue;
		}
		/* A file store's data first, under the header's name + .data:
		 * the header's name is what recovery looks for. */
		if (st->kind == SFS_STAGE_FILE) {
			char data[SFS_STORE_NAME_MAX + 16];
			sfs_name_cat(data, sizeof(data), name, SFS_STORE_DATA);
			snprintf(proc, sizeof(proc), "/proc/thread-self/fd/%d", st->fd);
			SFS_REAL(unlinkat)(priv, data, 0); /* a dead one's, adopted */
			if (SFS_REAL(linkat)(AT_FDCWD, proc, priv, data, AT_SYMLINK_FOLLOW) != 0)
				return -errno;
		}
		snprintf(proc, sizeof(proc), "/proc/thread-self/fd/%d", st->hfd);
		if (SFS_REAL(linkat)(AT_FDCWD, proc, priv, name, AT_SYMLINK_FOLLOW) == 0)
			break;
		if (errno != EEXIST || attempt > 0)
			return -errno;
		sfs_adopt_for_open(kfd, dev, ino, false);
	}
	return 0;
}

int sfs_stage_open_window(struct sfs_stage *st, int kfd, dev_t dev, ino_t ino, int64_t base)
{
	int rc = bind_store(st, kfd, dev, ino);
	if (rc)
		return rc;
	struct sfs_store_hdr *h = st->hdr;
	h->base = (uint64_t)base;
	atomic_store(&h->size, (uint64_t)base);
	atomic_store(&h->relinking, 0);
	h->seq++;
	atomic_store_explicit(&h->state, SFS_STORE_OPEN, memory_order_release);
	return 0;
}

void sfs_stage_acknowledge(struct sfs_stage *st, int64_t end)
{
	atomic_store_explicit(&st->hdr->size, (uint64_t)end, memory_order_release);
}

int sfs_stage_cover(struct sfs_stage *st, int64_t base, int64_t end)
{
	if (st->kind == SFS_STAGE_RING)
		return end - base <= st->cap ? 0 : -ENOSPC;
	if (end - base > (int64_t)sfs_g.opt.staging_size)
		return -ENOSPC; /* SPLITFS_STAGING_SIZE bounds a window */
	int64_t need = end;
	if (need <= st->cap)
		return 0;
	int64_t cap = SFS_ALIGN_UP(need, (int64_t)1 << sfs_g.map_shift);
	/* The library's own file must not meet the application's
	 * RLIMIT_FSIZE (SIGXFSZ would end the program). */
	uint64_t lim = atomic_load_explicit(&sfs_g.fsize_limit, memory_order_relaxed);
	if ((uint64_t)cap > lim)
		cap = need;
	if ((uint64_t)cap > lim)
		return -EFBIG;
	if (SFS_REAL(ftruncate)(st->fd, cap) != 0)
		return -errno;
	st->cap = cap;
	return 0;
}

int64_t sfs_stage_file_offset(const struct sfs_stage *st, int64_t off)
{
	uint64_t contig;
	return (int64_t)sfs_store_pos((uint32_t)st->kind, (uint64_t)st->cap, (uint64_t)off,
				      &contig);
}

/* The address of off and the contiguous bytes there (file: up to the end of
 * its chunk). NULL with *err when a file chunk cannot be mapped. */
static char *addr(struct sfs_stage *st, int64_t off, size_t *len, int *err)
{
	uint64_t contig;
	uint64_t pos = sfs_store_pos((uint32_t)st->kind, (uint64_t)st->cap, (uint64_t)off, &contig);
	if (st->kind == SFS_STAGE_RING) {
		*len = (size_t)SFS_MIN((uint64_t)*len, contig);
		return st->map + pos;
	}
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	*len = SFS_MIN(*len, (size_t)(chunk - (int64_t)(pos & (uint64_t)(chunk - 1))));
	char *m = sfs_map_get(&st->maps, st->fd, pos, PROT_READ | PROT_WRITE, false, err);
	return m ? m + (pos & (uint64_t)(chunk - 1)) : NULL;
}

char *sfs_stage_peek(struct sfs_stage *st, int64_t off, size_t *len)
{
	if (st->kind == SFS_STAGE_RING) {
		int err;
		return addr(st, off, len, &err);
	}
	uint64_t contig;
	uint64_t pos = sfs_store_pos((uint32_t)st->kind, (uint64_t)st->cap, (uint64_t)off, &contig);
	int64_t chunk = (int64_t)1 << sfs_g.map_shift;
	*len = SFS_MIN(*len, (size_t)(chunk - (int64_t)(pos & (uint64_t)(chunk - 1))));
	char *m = sfs_map_mapped(&st->maps, pos);
	return m ? m + (pos & (uint64_t)(chunk - 1)) : NULL;
}

int sfs_stage_xfer(struct sfs_stage *st, int64_t off, char *buf, size_t n, int to_stage)
{
	while (n > 0) {
		size_t len = n;
		int err = 0;
		char *p = addr(st, off, &len, &err);
		if (!p) {
			/* A file chunk the mapping budget does not allow. */
			off_t pos = (off_t)sfs_stage_file_offset(st, off);
			ssize_t r = to_stage ? SFS_REAL(pwrite)(st->fd, buf, len, pos) :
					       SFS_REAL(pread)(st->fd, buf, len, pos);
			if (r != (ssize_t)len)
				return r < 0 ? -errno : -EIO;
		} else if (to_stage) {
			int rc = sfs_guarded_copy(p, buf, len);
			if (rc)
				return rc;
		} else {
			sfs_racy_copy_begin(); /* a versioned read's (read.c) */
			int rc = sfs_guarded_copy(buf, p, len);
			sfs_racy_copy_end();
			if (rc)
				return rc;
		}
		off += (int64_t)len;
		buf += len;
		n -= len;
	}
	return 0;
}

void sfs_stage_abandon(struct sfs_stage *st)
{
	if (st->kind == SFS_STAGE_NONE)
		return;
	if (st->kind == SFS_STAGE_FILE)
		sfs_map_drop_all(&st->maps);
	munmap(st->map,
	       st->kind == SFS_STAGE_RING ? (size_t)(SFS_STORE_HDR + st->cap) : SFS_STORE_HDR);
	if (st->hfd != st->fd)
		sfs_internal_close(st->hfd);
	sfs_internal_close(st->fd); /* the flock goes with it: recovery's now */
	st->kind = SFS_STAGE_NONE;
	st->fd = st->hfd = -1;
	st->map = NULL;
	st->hdr = NULL;
	st->bound = false;
	st->census = 0; /* bound still: its count stays */
}

void sfs_stage_forget(struct sfs_stage *st)
{
	/* The store's mappings were not inherited (MADV_DONTFORK). */
	if (st->kind == SFS_STAGE_FILE) {
		sfs_map_forget(&st->maps);
		sfs_internal_close(st->hfd);
	}
	if (st->kind != SFS_STAGE_NONE)
		sfs_internal_close(st->fd);
	st->kind = SFS_STAGE_NONE;
	st->fd = st->hfd = -1;
	st->map = NULL;
	st->hdr = NULL;
	st->bound = false;
	st->census = 0; /* the parent's count */
}

void sfs_stage_relinking(struct sfs_stage *st)
{
	if (st->kind != SFS_STAGE_NONE)
		atomic_store_explicit(&st->hdr->relinking, 1, memory_order_release);
}

void sfs_stage_empty(struct sfs_stage *st)
{
	if (st->kind == SFS_STAGE_NONE)
		return;
	atomic_store_explicit(&st->hdr->state, SFS_STORE_EMPTY, memory_order_release);
	atomic_store_explicit(&st->hdr->relinking, 0, memory_order_release);
	if (st->kind == SFS_STAGE_FILE && SFS_REAL(ftruncate)(st->fd, 0) == 0)
		st->cap = 0;
}

/* --- adoption in the library ---------------------------------------------- */

void sfs_adopt_env_lib(struct sfs_recover_env *env, int root_fd)
{
	env->sys = sfs_lib_sys();
	memcpy(env->boot_id, sfs_g.boot_id, sizeof(env->boot_id));
	env->mnt_id = sfs_g.mnt_id;
	env->euid = sfs_g.euid;
	env->all_users = false;
	env->root_dev = sfs_g.root_dev;
	env->census_leave = sfs_census_leave;
	env->root_fd = root_fd;
}

bool sfs_adopt_for_open(int fd, dev_t dev, ino_t ino, bool truncated)
{
	char name[SFS_STORE_NAME_MAX];
	sfs_store_name(name, sizeof(name), sfs_g.euid, dev, ino);
	struct stat st;
	int priv = sfs_privdir();
	if (SFS_REAL(fstatat)(priv, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return false; /* the common case: one lookup of a name that is not there */
	/* The application's descriptor serves if it writes at explicit offsets;
	 * otherwise adoption opens the file for writing itself. */
	int fl = SFS_REAL(fcntl)(fd, F_GETFL);
	int target = fl >= 0 && (fl & O_ACCMODE) != O_RDONLY && !(fl & O_APPEND) ? fd : -1;
	/* open_by_handle_at takes no O_PATH descriptor. */
	int root = SFS_REAL(openat)(priv, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct sfs_recover_env env;
	sfs_adopt_env_lib(&env, root);
	struct sfs_recovery rep;
	memset(&rep, 0, sizeof(rep));
	sfs_adopt_store(&env, priv, name, target, truncated, &rep);
	if (root >= 0)
		SFS_REAL(close)(root);
	if (rep.stores)
		sfs_stat_event(SFS_EV_adopted_stores, rep.stores);
	if (rep.first_error[0])
		sfs_warn("staged appends of a dead process: %s", rep.first_error);
	return true;
}
