/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "registry.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../init.h"
#include "../interpose/real.h"
#include "../util/compiler.h"
#include "../util/msg.h"
#include "../util/stats.h"
#include "../staging/stage.h"
#include "fdtable.h"
#include "inode.h"
#include "../oplog/oplog.h"

#define REG_MAGIC 0x5346535245473033ull /* "SFSREG03" */
#define REG_SLOTS 16384
#define SFS_REG_TOMBSTONE UINT64_MAX

struct reg_header {
	uint64_t magic;
	uint32_t nslots;
	uint32_t entry_size;
	pthread_mutex_t lock; /* robust, process-shared: slot allocation */
	uint8_t pad[72];
};

/* Shared-memory layouts: every process on the machine maps these. */
static_assert(sizeof(pthread_mutex_t) == 40, "x86-64 glibc mutex");
static_assert(offsetof(struct sfs_reg_entry, lock) == 16, "entry layout");
static_assert(offsetof(struct sfs_reg_entry, gen) == 56, "entry layout");
static_assert(offsetof(struct sfs_reg_entry, base) == 80, "entry layout");
static_assert(offsetof(struct sfs_reg_entry, pids) == 96, "entry layout");
static_assert(offsetof(struct sfs_reg_entry, ring_shift) == 120, "entry layout");
static_assert(offsetof(struct sfs_reg_entry, log_file) == 124, "entry layout");
static_assert(sizeof(struct sfs_reg_proc) == 256, "log slot layout");
static_assert(offsetof(struct sfs_reg_proc, inflight) == 80, "log slot layout");
static_assert(sizeof(struct sfs_reg_entry) == 128, "entry layout");
static_assert(sizeof(struct reg_header) == 128, "header layout");

static struct reg_header *hdr;
static struct sfs_reg_entry *slots;
static struct sfs_reg_proc *procs; /* after the entries */

static void init_robust(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

int sfs_registry_init(void)
{
	char path[128];
	/* Named by layout version: processes of another SplitFS version use
	 * their own registry (and cannot coordinate with this one). */
	snprintf(path, sizeof(path), "/dev/shm/splitfs-registry-v%u-%u-%u",
		 (unsigned)(REG_MAGIC & 0xff) - '0', major(sfs_g.root_dev), minor(sfs_g.root_dev));
	int fd = sfs_real.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0)
		return -errno;
	size_t len = sizeof(struct reg_header) + REG_SLOTS * sizeof(struct sfs_reg_entry) +
		     SFS_REG_PROCS * sizeof(struct sfs_reg_proc);
	int rc = 0;
	flock(fd, LOCK_EX); /* one initialiser */
	struct stat st;
	if (sfs_real.fstat(fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	bool fresh = st.st_size == 0;
	if (fresh && (sfs_real.ftruncate(fd, (off_t)len) != 0 || fchmod(fd, 0666) != 0)) {
		rc = -errno;
		goto out;
	}
	void *m = sfs_real.mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	struct reg_header *h = m;
	if (fresh) {
		h->nslots = REG_SLOTS;
		h->entry_size = sizeof(struct sfs_reg_entry);
		init_robust(&h->lock);
		struct sfs_reg_entry *e = (void *)(h + 1);
		for (int i = 0; i < REG_SLOTS; i++) {
			init_robust(&e[i].lock);
			e[i].log_slot = -1;
		}
		struct sfs_reg_proc *pr = (void *)(e + REG_SLOTS);
		for (int i = 0; i < SFS_REG_PROCS; i++)
			init_robust(&pr[i].lock);
		atomic_thread_fence(memory_order_release);
		h->magic = REG_MAGIC;
	} else if (h->magic != REG_MAGIC || h->nslots != REG_SLOTS ||
		   h->entry_size != sizeof(struct sfs_reg_entry)) {
		munmap(m, len);
		rc = -EPROTO; /* another SplitFS version: do not touch it */
		goto out;
	}
	hdr = h;
	slots = (void *)(h + 1);
	procs = (void *)(slots + REG_SLOTS);
out:
	flock(fd, LOCK_UN);
	sfs_real.close(fd);
	return rc;
}

static bool alive(int32_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

static void lock_robust(pthread_mutex_t *m, struct sfs_reg_entry *e)
{
	if (pthread_mutex_lock(m) == EOWNERDEAD) {
		/* The holder died mid-update: a window it described is gone
		 * with it (POSIX mode never promised unsynced data). */
		if (e && !alive(e->owner))
			e->staged = 0;
		pthread_mutex_consistent(m);
	}
}

void sfs_reg_lock(struct sfs_reg_entry *e)
{
	lock_robust(&e->lock, e);
}

bool sfs_reg_trylock(struct sfs_reg_entry *e)
{
	int rc = pthread_mutex_trylock(&e->lock);
	if (rc == EOWNERDEAD) { /* as lock_robust */
		if (!alive(e->owner))
			e->staged = 0;
		pthread_mutex_consistent(&e->lock);
		rc = 0;
	}
	return rc == 0;
}

void sfs_reg_unlock(struct sfs_reg_entry *e)
{
	pthread_mutex_unlock(&e->lock);
}

static unsigned slot_of(dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)ino * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)dev * 0xC2B2AE3D27D4EB4Full);
	return (unsigned)(h >> 32) % REG_SLOTS;
}

/* Finds or (create) inserts the entry. Caller holds hdr->lock. */
static struct sfs_reg_entry *find(dev_t dev, ino_t ino, bool create)
{
	struct sfs_reg_entry *free_slot = NULL;
	unsigned i = slot_of(dev, ino);
	for (unsigned k = 0; k < REG_SLOTS; k++, i = (i + 1) % REG_SLOTS) {
		struct sfs_reg_entry *e = &slots[i];
		if (e->ino == 0) {
			if (!free_slot)
				free_slot = e;
			break;
		}
		if (e->ino == SFS_REG_TOMBSTONE) {
			if (!free_slot)
				free_slot = e;
			continue;
		}
		if (e->dev == dev && e->ino == ino)
			return e;
	}
	if (!create || !free_slot)
		return NULL;
	free_slot->dev = dev;
	free_slot->ino = ino;
	atomic_store(&free_slot->shared, 0);
	free_slot->owner = 0;
	free_slot->staged = 0;
	free_slot->log_slot = -1;
	memset(free_slot->pids, 0, sizeof(free_slot->pids));
	return free_slot;
}

/* Drops dead pids; returns how many others than me remain, adding me when
 * add is set (a full list makes the file shared for good). */
static int prune(struct sfs_reg_entry *e, int32_t me, bool add)
{
	int others = 0;
	bool present = false;
	for (int i = 0; i < SFS_REG_PIDS; i++) {
		int32_t p = e->pids[i];
		if (p == me)
			present = true;
		else if (p && !alive(p))
			e->pids[i] = 0;
		else if (p)
			others++;
	}
	if (add && !present) {
		int i = 0;
		while (i < SFS_REG_PIDS && e->pids[i])
			i++;
		if (i < SFS_REG_PIDS)
			e->pids[i] = me;
		else
			others = SFS_REG_PIDS; /* untracked: treat as shared */
	}
	return others;
}

/* Relinks another process's window by copying it, through /proc. Caller
 * holds e->lock, so the owner cannot change the window meanwhile. */
static bool take_over(struct sfs_reg_entry *e)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", e->owner, e->stage_fd);
	int sfd = sfs_real.open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", e->owner, e->kfd);
	int tfd = sfd >= 0 ? sfs_real.open(path, O_WRONLY | O_CLOEXEC) : -1;
	bool ok = sfd >= 0 && tfd >= 0;
	char buf[64 * 1024];
	int kind = e->ring_shift ? SFS_STAGE_RING : SFS_STAGE_FILE;
	int64_t cap = e->ring_shift ? (int64_t)1 << e->ring_shift : 0;
	for (int64_t off = e->base; ok && off < e->size;) {
		int64_t contig;
		int64_t at = sfs_stage_fd_offset(kind, cap, off, &contig);
		size_t n = (size_t)SFS_MIN(SFS_MIN((int64_t)sizeof(buf), e->size - off), contig);
		ssize_t r = sfs_real.pread(sfd, buf, n, at);
		if (r < (ssize_t)n && r >= 0) /* a hole at the staging file's end */
			memset(buf + r, 0, n - (size_t)r);
		ok = r >= 0 && sfs_real.pwrite(tfd, buf, n, off) == (ssize_t)n;
		off += (int64_t)n;
	}
	if (sfd >= 0)
		sfs_real.close(sfd);
	/* A close of a descriptor of the file drops this process's POSIX locks
	 * on it: keep it (hidden) if there may be any. */
	if (tfd >= 0 && sfs_posix_locked((dev_t)e->dev, (ino_t)e->ino))
		sfs_fd_set_internal(tfd, true);
	else if (tfd >= 0)
		sfs_real.close(tfd);
	if (!ok) {
		sfs_warn("cannot relink the data pid %d staged for a file this process opens (%s); "
			 "the two processes may conflict", e->owner, strerror(errno));
		return false;
	}
	e->staged = 0;
	atomic_fetch_add(&e->gen, 1);
	sfs_stat_event(SFS_EV_takeovers, 1);
	return true;
}

/* The owner logs its writes (sync/strict): make the file durable and put a
 * COMMIT for it in the owner's log, so that after a crash its older records
 * are not replayed over what this process writes from now on. Caller holds
 * e->lock, so the owner writes nothing meanwhile. */
static void commit_owner_log(struct sfs_reg_entry *e)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", e->owner, e->kfd);
	int fd = sfs_real.open(path, O_RDONLY | O_CLOEXEC);
	int rc = fd < 0 ? -errno : sfs_real.fdatasync(fd) ? -errno : 0;
	if (!rc)
		rc = sfs_oplog_commit_other(e->log_slot, e->log_file, e->owner);
	if (fd >= 0 && sfs_posix_locked((dev_t)e->dev, (ino_t)e->ino))
		sfs_fd_set_internal(fd, true); /* a close would drop our POSIX locks */
	else if (fd >= 0)
		sfs_real.close(fd);
	if (rc)
		sfs_warn("cannot close pid %d's log for a file this process opens (%s); a crash "
			 "recovery could replay older data over it", e->owner, strerror(-rc));
	else
		e->log_slot = -1;
}

/* Registers this process for (dev, ino); relinks another process's window
 * when the file becomes shared. manage: this process wants to stage. */
static struct sfs_reg_entry *join(dev_t dev, ino_t ino, bool manage, bool *alone)
{
	*alone = true;
	if (!hdr)
		return NULL;
	int32_t me = sfs_self_pid();
	struct sfs_reg_entry *e;
	int others;
	/* Who else has the file is read under the entry's lock, so the
	 * decision below and what it stores are one step: two processes
	 * joining at once must not both find themselves alone (the later
	 * one's "shared" overwritten by the earlier one's "alone"). The
	 * entry lock is taken before the registry lock, as everywhere (a
	 * writer holding its inode lock may claim a log slot). */
	for (;;) {
		lock_robust(&hdr->lock, NULL);
		e = find(dev, ino, true);
		pthread_mutex_unlock(&hdr->lock);
		if (!e) {
			sfs_warn("registry full: files are coordinated within each process only");
			return NULL;
		}
		sfs_reg_lock(e);
		lock_robust(&hdr->lock, NULL);
		bool same = e->dev == dev && e->ino == ino; /* not freed and reused meanwhile */
		others = same ? prune(e, me, true) : 0;
		pthread_mutex_unlock(&hdr->lock);
		if (same)
			break;
		sfs_reg_unlock(e);
	}
	if (others > 0) {
		if (e->staged && e->owner != me && alive(e->owner))
			take_over(e);
		if (e->log_slot >= 0 && e->owner != me && alive(e->owner))
			commit_owner_log(e);
		atomic_store(&e->shared, 1);
		*alone = false;
	} else if (manage) {
		atomic_store(&e->shared, 0);
		e->owner = me;
		e->staged = 0;
	}
	sfs_reg_unlock(e);
	return e;
}

struct sfs_reg_entry *sfs_reg_join(dev_t dev, ino_t ino, bool *alone)
{
	return join(dev, ino, true, alone);
}

void sfs_reg_leave(struct sfs_reg_entry *e)
{
	if (!e)
		return;
	int32_t me = sfs_self_pid();
	lock_robust(&hdr->lock, NULL);
	int others = 0;
	for (int i = 0; i < SFS_REG_PIDS; i++) {
		if (e->pids[i] == me)
			e->pids[i] = 0;
		else if (e->pids[i])
			others++;
	}
	if (others == 0) {
		e->ino = SFS_REG_TOMBSTONE;
		e->dev = 0;
	}
	pthread_mutex_unlock(&hdr->lock);
}

void sfs_reg_pin(dev_t dev, ino_t ino)
{
	bool alone;
	join(dev, ino, false, &alone);
}

void sfs_reg_flush_others(dev_t dev, ino_t ino)
{
	if (!hdr)
		return;
	lock_robust(&hdr->lock, NULL);
	struct sfs_reg_entry *e = find(dev, ino, false);
	pthread_mutex_unlock(&hdr->lock);
	if (!e)
		return;
	sfs_reg_lock(e);
	if (e->staged && e->owner != sfs_self_pid() && alive(e->owner))
		take_over(e);
	sfs_reg_unlock(e);
}

void sfs_reg_publish(struct sfs_reg_entry *e, bool staged, int stage_fd, int64_t ring_cap,
		     int kfd, int64_t base, int64_t size)
{
	e->owner = sfs_self_pid();
	e->ring_shift = ring_cap ? __builtin_ctzll((unsigned long long)ring_cap) : 0;
	e->staged = staged;
	e->stage_fd = stage_fd;
	e->kfd = kfd;
	e->base = base;
	e->size = size;
}

struct sfs_reg_proc *sfs_reg_proc_claim(void)
{
	if (!hdr)
		return NULL;
	int32_t me = sfs_self_pid();
	struct sfs_reg_proc *got = NULL;
	lock_robust(&hdr->lock, NULL);
	for (int i = 0; i < SFS_REG_PROCS && !got; i++) {
		struct sfs_reg_proc *p = &procs[i];
		if (p->pid == 0 || p->pid == me || !alive(p->pid)) {
			p->pid = me;
			atomic_store(&p->inflight, 0);
			got = p;
		}
	}
	pthread_mutex_unlock(&hdr->lock);
	return got;
}

void sfs_reg_proc_release(struct sfs_reg_proc *p)
{
	if (!p)
		return;
	lock_robust(&hdr->lock, NULL);
	p->pid = 0;
	p->path[0] = '\0';
	pthread_mutex_unlock(&hdr->lock);
}

int sfs_reg_proc_index(const struct sfs_reg_proc *p)
{
	return p && procs ? (int)(p - procs) : -1;
}

struct sfs_reg_proc *sfs_reg_proc_at(int index)
{
	return procs && index >= 0 && index < SFS_REG_PROCS ? &procs[index] : NULL;
}

void sfs_reg_proc_lock(struct sfs_reg_proc *p)
{
	if (pthread_mutex_lock(&p->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&p->lock);
}
