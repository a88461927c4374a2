/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "adopt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "../util/decname.h"
#include "../util/dirscan.h"

void sfs_store_name(char *buf, size_t n, uid_t uid, dev_t dev, ino_t ino)
{
	uint64_t v[] = {(unsigned)uid, (uint64_t)dev, (uint64_t)ino};
	sfs_decname(buf, n, "stage.", v, 3); /* "stage.%u.%llu.%llu" */
}

void sfs_store_park_name(char *buf, size_t n, uid_t uid, uint64_t id)
{
	uint64_t v[] = {(unsigned)uid, id};
	sfs_decname(buf, n, "idle.", v, 2); /* "idle.%u.%llu" */
}

static void note(struct sfs_recovery *rep, const char *fmt, const char *name, int err)
{
	if (rep->first_error[0])
		return;
	snprintf(rep->first_error, sizeof(rep->first_error), fmt, name);
	if (err) {
		size_t l = strlen(rep->first_error);
		snprintf(rep->first_error + l, sizeof(rep->first_error) - l, ": %s", strerror(err));
	}
}

/* Opens the store's target for writing, from its header: by file handle
 * (root) or by its path, and checks it is the very file. -1 if not, with
 * *gone set when the file no longer exists (its handle is stale, or
 * nothing is at its path). */
static int open_target(const struct sfs_recover_env *env, const struct sfs_store_hdr *h, bool *gone)
{
	const struct sfs_sys *sys = env->sys;
	int fd = -1;
	*gone = false;
	if (h->handle_bytes && h->handle_bytes <= sizeof(h->handle) && env->root_fd >= 0) {
		struct {
			struct file_handle fh;
			unsigned char bytes[sizeof(h->handle)];
		} fh;
		fh.fh.handle_bytes = h->handle_bytes;
		fh.fh.handle_type = h->handle_type;
		memcpy(fh.fh.f_handle, h->handle, h->handle_bytes);
		fd = open_by_handle_at(env->root_fd, &fh.fh, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 && errno == ESTALE) {
			*gone = true; /* deleted, and its blocks with it */
			return -1;
		}
	}
	if (fd < 0 && memchr(h->path, '\0', sizeof(h->path)) && h->path[0] == '/') {
		fd = sys->open(h->path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd < 0 && errno == ENOENT)
			*gone = true;
	}
	if (fd < 0)
		return -1;
	struct stat st;
	unsigned int igen = 0;
	sys->ioctl(fd, FS_IOC_GETVERSION, &igen);
	if (sys->fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != (dev_t)h->dev ||
	    st.st_ino != (ino_t)h->ino || igen != h->igen) {
		sys->close(fd); /* renamed over, or the name is another file now */
		return -1;
	}
	return fd;
}

/* Copies the window [from, to) from the store into the target. */
static int copy_window(const struct sfs_sys *sys, int sfd, const struct sfs_store_hdr *h, int tfd,
		       uint64_t from, uint64_t to)
{
	enum { PIECE = 1 << 16 };
	char *buf = malloc(PIECE);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	for (uint64_t off = from; off < to && !rc;) {
		uint64_t contig;
		uint64_t pos = sfs_store_pos(h->layout, h->cap, off, &contig);
		size_t n = (size_t)SFS_MIN(SFS_MIN((uint64_t)PIECE, to - off), contig);
		ssize_t r = sys->pread(sfd, buf, n, (off_t)pos);
		if (r < (ssize_t)n && r >= 0) /* a file store's sparse tail */
			memset(buf + r, 0, n - (size_t)r);
		if (r < 0 || sys->pwrite(tfd, buf, n, (off_t)off) != (ssize_t)n)
			rc = errno ? -errno : -EIO;
		off += n;
	}
	free(buf);
	return rc;
}

/* Removes the store called name (and a file store's data beside it);
 * returns whether name is gone. */
static bool remove_store(const struct sfs_sys *sys, int dirfd, const char *name)
{
	char data[SFS_STORE_NAME_MAX + 16];
	sfs_name_cat(data, sizeof(data), name, SFS_STORE_DATA);
	bool gone = sys->unlinkat(dirfd, name, 0) == 0 || errno == ENOENT;
	sys->unlinkat(dirfd, data, 0);
	return gone;
}

/* The bound name of a store counted in a census (by its owner, of the
 * caller's user) is gone: one fewer in that census, if it is the caller's. */
static void uncount(const struct sfs_recover_env *env, const char *name,
		    const struct sfs_store_hdr *h, const struct stat *st, bool gone)
{
	if (gone && h->census && env->census_leave && strncmp(name, "stage.", 6) == 0 &&
	    st->st_uid == env->euid)
		env->census_leave(h->census);
}

/* Keeps the store called name apart, as orphan.* (with its data). */
static bool keep_store(const struct sfs_sys *sys, int dirfd, const char *name)
{
	char kept[SFS_STORE_NAME_MAX + 48], data[SFS_STORE_NAME_MAX + 16];
	long long now = (long long)time(NULL);
	sfs_name_cat(data, sizeof(data), name, SFS_STORE_DATA);
	snprintf(kept, sizeof(kept), "orphan.%s.%lld%s", name + 6, now, SFS_STORE_DATA);
	sys->renameat(dirfd, data, dirfd, kept);
	snprintf(kept, sizeof(kept), "orphan.%s.%lld", name + 6, now);
	return sys->renameat(dirfd, name, dirfd, kept) == 0;
}

/* Whether the header describes a store this code wrote. */
static bool sane(const struct sfs_store_hdr *h, const struct stat *st)
{
	if (h->magic != SFS_STORE_MAGIC || h->version != 1)
		return false;
	if (h->layout == SFS_STORE_RING)
		return h->cap >= (1 << 16) && h->cap <= SFS_STORE_MAX_CAP &&
		       !(h->cap & (h->cap - 1)) && (uint64_t)st->st_size >= SFS_STORE_HDR + h->cap;
	return h->layout == SFS_STORE_FILE;
}

int64_t sfs_adopt_store(const struct sfs_recover_env *env, int dirfd, const char *name,
			int target_fd, bool discard, struct sfs_recovery *rep)
{
	const struct sfs_sys *sys = env->sys;
	int sfd = sys->openat(dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (sfd < 0)
		return -errno;
	struct stat st;
	struct sfs_store_hdr *h = NULL;
	int64_t ret = -EPERM;
	if (sys->fstat(sfd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < SFS_STORE_HDR ||
	    (st.st_mode & 077) || st.st_nlink != 1 ||
	    (st.st_uid != env->euid && !(env->euid == 0 && env->all_users)))
		goto out; /* not a store of ours: another user's, or a plant */
	if (sys->flock(sfd, LOCK_EX | LOCK_NB) != 0) {
		ret = -EBUSY; /* its process lives */
		goto out;
	}
	h = malloc(sizeof(*h));
	if (!h || sys->pread(sfd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h) || !sane(h, &st)) {
		ret = -EINVAL;
		goto out;
	}
	uint64_t base = h->base, size = atomic_load(&h->size);
	bool open = atomic_load(&h->state) == SFS_STORE_OPEN && size > base &&
		    (h->layout != SFS_STORE_RING || size - base <= h->cap);
	ret = 0;
	if (!open || discard || memcmp(h->boot_id, env->boot_id, 16) != 0 ||
	    h->mnt_id != env->mnt_id) {
		/* Nothing staged, a truncated file, or a window of another mount
		 * (a crash since: its page cache is gone, or half written back). */
		if (open)
			rep->discarded++;
		uncount(env, name, h, &st, remove_store(sys, dirfd, name));
		goto out;
	}
	int tfd = target_fd;
	bool gone = false;
	if (tfd < 0)
		tfd = open_target(env, h, &gone);
	struct stat ts;
	if (gone) {
		/* The file was deleted: the kernel would have dropped the data. */
		rep->discarded++;
		uncount(env, name, h, &st, remove_store(sys, dirfd, name));
		goto close_target;
	}
	if (tfd < 0 || sys->fstat(tfd, &ts) != 0 || ts.st_dev != (dev_t)h->dev ||
	    ts.st_ino != (ino_t)h->ino) {
		/* Renamed over, or not ours to open: kept apart, said once. */
		bool kept = keep_store(sys, dirfd, name);
		uncount(env, name, h, &st, kept);
		if (kept)
			rep->orphaned++;
		note(rep, "%s: its file cannot be found or opened for writing; kept as orphan.*",
		     name, 0);
		ret = -ENOENT;
		goto close_target;
	}
	if (st.st_uid != 0 && ts.st_uid != st.st_uid) {
		note(rep, "%s: the file belongs to another user than the store", name, 0);
		ret = -EPERM;
		goto close_target;
	}
	/* The size the window opened on: nothing changed the file since. A
	 * size between base and size while a relink ran: the kill landed in
	 * the middle of it (a copy in pieces); the bytes are the window's
	 * own, and writing them all again is the same. Any other size below
	 * size is another process's change (an append after the owner died):
	 * never written over (below). */
	bool mid_relink = atomic_load(&h->relinking) != 0 && (uint64_t)ts.st_size > base &&
			  (uint64_t)ts.st_size < size;
	if ((uint64_t)ts.st_size == base || mid_relink) {
		/* A file store's data is in its .data file, of the same owner. */
		int dfd = sfd;
		if (h->layout == SFS_STORE_FILE) {
			char data[SFS_STORE_NAME_MAX + 16];
			sfs_name_cat(data, sizeof(data), name, SFS_STORE_DATA);
			dfd = sys->openat(dirfd, data,
					  O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
			struct stat ds;
			if (dfd >= 0 && (sys->fstat(dfd, &ds) != 0 || ds.st_uid != st.st_uid)) {
				sys->close(dfd);
				dfd = -1;
			}
		}
		ret = dfd < 0 ? -ENOENT : copy_window(sys, dfd, h, tfd, base, size);
		if (dfd >= 0 && dfd != sfd)
			sys->close(dfd);
		if (ret == 0) {
			ret = (int64_t)(size - base);
			rep->stores++;
			rep->store_bytes += size - base;
		} else {
			note(rep, "%s: writing its window back", name, (int)-ret);
		}
	} else if ((uint64_t)ts.st_size != size) {
		/* The file changed after its owner died: never written over. */
		bool kept = keep_store(sys, dirfd, name);
		uncount(env, name, h, &st, kept);
		if (kept) {
			rep->orphaned++;
			note(rep,
			     "%s: the file changed after its writer died; its unsynced appends "
			     "are kept in .splitfs/orphan.*",
			     name, 0);
		}
		ret = -ESTALE;
		goto close_target;
	}
	if (ret >= 0) {
		uint32_t empty = SFS_STORE_EMPTY;
		sys->pwrite(sfd, &empty, sizeof(empty), offsetof(struct sfs_store_hdr, state));
		uncount(env, name, h, &st, remove_store(sys, dirfd, name));
	}
close_target:
	if (tfd >= 0 && tfd != target_fd)
		sys->close(tfd);
out:
	free(h);
	sys->close(sfd);
	return ret;
}

void sfs_adopt_entry(const struct sfs_recover_env *env, int dirfd, const char *name,
		     struct sfs_recovery *rep)
{
	/* Most names are not stores (logs, free logs, the image's tag): they
	 * go before any formatting, at every process start. */
	if (strncmp(name, "stage.", 6) != 0 && strncmp(name, "idle.", 5) != 0)
		return;
	if (sfs_store_is_data(name))
		return; /* a data file goes with its header */
	char mine[32], parked[32];
	int ml = snprintf(mine, sizeof(mine), "stage.%u.", (unsigned)env->euid);
	int pl = snprintf(parked, sizeof(parked), "idle.%u.", (unsigned)env->euid);
	if (strncmp(name, parked, (size_t)pl) == 0) {
		/* Bound to no file, so nothing to put back: removed once its
		 * owner is dead (it holds the store's flock). */
		sfs_adopt_store(env, dirfd, name, -1, true, rep);
		return;
	}
	if (strncmp(name, "stage.", 6) != 0)
		return;
	/* A user's own stores; root's `splitfs recover`, everyone's. */
	if (!(env->euid == 0 && env->all_users) && strncmp(name, mine, (size_t)ml) != 0)
		return;
	sfs_adopt_store(env, dirfd, name, -1, false, rep);
}

void sfs_adopt_dir(const struct sfs_recover_env *env, int dirfd, struct sfs_recovery *rep)
{
	int scan = env->sys->openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (scan < 0)
		return;
	struct sfs_dirscan names;
	sfs_dirscan_start(&names, scan, env->sys->getdents64);
	const struct dirent64 *de;
	while ((de = sfs_dirscan_next(&names)) != NULL)
		sfs_adopt_entry(env, dirfd, de->d_name, rep);
	env->sys->close(scan);
}
