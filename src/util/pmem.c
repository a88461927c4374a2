/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "pmem.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "msg.h"
#include "stats.h"
#include "signals.h"
#include "../sys/real.h"

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

/* The libpmem2 entry points used, resolved once from the dlopen'ed library. */
static struct {
	int (*source_from_fd)(struct pmem2_source **, int);
	int (*source_delete)(struct pmem2_source **);
	int (*config_new)(struct pmem2_config **);
	int (*config_delete)(struct pmem2_config **);
	int (*config_set_required_store_granularity)(struct pmem2_config *, enum pmem2_granularity);
	int (*config_set_length)(struct pmem2_config *, size_t);
	int (*map_new)(struct pmem2_map **, const struct pmem2_config *,
		       const struct pmem2_source *);
	int (*map_delete)(struct pmem2_map **);
	void *(*map_get_address)(struct pmem2_map *);
	pmem2_memcpy_fn (*get_memcpy_fn)(struct pmem2_map *);
	pmem2_drain_fn (*get_drain_fn)(struct pmem2_map *);
	const char *(*errormsg)(void);
} P;
static bool loaded, load_tried;
/* Set, under load_lock, by sfs_pmem_close: libpmem2's destructor (which frees
 * its table of maps) may run from now on, so no map is made or deleted. */
static bool closed;
/* Held while libpmem2 is loaded and while a map is made with it, and across
 * fork (sfs_pmem_atfork_*): a fork in the middle of dlopen handed the child
 * a half-relocated libpmem2 (seen in the lab: the child's own dlopen failed
 * with "undefined symbol: ndctl_cmd_unref", or its first call jumped to an
 * unrelocated address and died of SIGSEGV; tests/c/fork_learn.c). */
SFS_HOT static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
/* The primitives of the first map: they depend on the CPU and the platform's
 * persistence domain, the same for every DAX mapping of the process. */
static pmem2_memcpy_fn copy_fn;
static pmem2_drain_fn drain_fn;
/* Set (release) once the two above are: stores into a file's own MAP_SYNC
 * mappings can then be made durable without a map of libpmem2's. */
static atomic_bool have_fns;

/* Whether the kernel serves fd with DAX (statx STATX_ATTR_DAX). */
static bool is_dax(int fd)
{
	struct statx sx;
	return SFS_REAL(statx)(fd, "", AT_EMPTY_PATH, 0, &sx) == 0 &&
	       (sx.stx_attributes & STATX_ATTR_DAX);
}

bool sfs_pmem_file_is_dax(int fd)
{
	/* Every managed file lies on the root's file system: once a file there
	 * is not DAX, the others are taken not to be either (one statx per
	 * process on a page-cache file system; with dax=inode a later DAX file
	 * keeps the page-cache path, which is correct there too). */
	static atomic_int fs_state; /* 0 unknown, 1 DAX seen, 2 not DAX */
	if (atomic_load_explicit(&fs_state, memory_order_relaxed) == 2)
		return false;
	bool dax = is_dax(fd);
	int unknown = 0;
	atomic_compare_exchange_strong(&fs_state, &unknown, dax ? 1 : 2);
	return dax;
}

/* Seen in the lab: a process returned from main while the staging
 * thread learnt the primitives (sfs_pmem_learn), and pmem2_map_new or
 * pmem2_map_delete ran on after libpmem2's destructor: SIGSEGV at exit
 * (tests/c/exit_learning.c). Waits for a map in flight; later ones fail
 * (-ECANCELED) and unmaps leave the mapping to the process's end. Run by
 * exit's handlers (registered at the load) and by the library's
 * destructor. */
void sfs_pmem_close(void)
{
	sfs_mutex_lock(&load_lock);
	closed = true;
	sfs_mutex_unlock(&load_lock);
}

static void load(void)
{
	void *h = dlopen("libpmem2.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		sfs_warn("DAX file system, but libpmem2 cannot be loaded (%s): "
			 "the system-call path is used",
			 dlerror());
		return;
	}
	struct {
		void **slot;
		const char *name;
	} syms[] = {
		{(void **)&P.source_from_fd, "pmem2_source_from_fd"},
		{(void **)&P.source_delete, "pmem2_source_delete"},
		{(void **)&P.config_new, "pmem2_config_new"},
		{(void **)&P.config_delete, "pmem2_config_delete"},
		{(void **)&P.config_set_required_store_granularity,
		 "pmem2_config_set_required_store_granularity"},
		{(void **)&P.config_set_length, "pmem2_config_set_length"},
		{(void **)&P.map_new, "pmem2_map_new"},
		{(void **)&P.map_delete, "pmem2_map_delete"},
		{(void **)&P.map_get_address, "pmem2_map_get_address"},
		{(void **)&P.get_memcpy_fn, "pmem2_get_memcpy_fn"},
		{(void **)&P.get_drain_fn, "pmem2_get_drain_fn"},
		{(void **)&P.errormsg, "pmem2_errormsg"},
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (!*syms[i].slot) {
			sfs_warn("libpmem2 has no %s: the system-call path is used", syms[i].name);
			return;
		}
	}
	loaded = true;
	/* exit runs the atexit handlers in reverse order of registration, and
	 * libpmem2's destructor from _dl_fini, which ld.so registered before
	 * main: this one, registered later, runs first. Not always: a load
	 * before main (another library's constructor) registers too early,
	 * and one that ends while exit is in _dl_fini too late (seen in the
	 * lab, about one process in 25 of tests/c/basic.c: the map's
	 * pmem2_map_new used libpmem2's freed table of maps). The library's
	 * destructor closes too, and _dl_fini calls it before libpmem2's. */
	atexit(sfs_pmem_close);
}

/* One libpmem2 map, made on a thread of its own (map_isolated). */
struct map_job {
	int fd;
	size_t len;
	struct pmem2_map *map;
	int rc;
	char why[160]; /* libpmem2's message is per thread: copied out */
};

static void *map_job_run(void *arg)
{
	struct map_job *j = arg;
	if (unshare(CLONE_FS) != 0) {
		j->rc = -errno;
		snprintf(j->why, sizeof(j->why), "unshare(CLONE_FS): %s", strerror(errno));
		return NULL;
	}
	struct pmem2_source *src = NULL;
	struct pmem2_config *cfg = NULL;
	/* Cache-line granularity at most: a mapping that would need msync
	 * (page granularity) is no use here. */
	int rc = P.source_from_fd(&src, j->fd);
	if (!rc)
		rc = P.config_new(&cfg);
	if (!rc)
		rc = P.config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_CACHE_LINE);
	if (!rc)
		rc = P.config_set_length(cfg, j->len);
	if (!rc)
		rc = P.map_new(&j->map, cfg, src);
	if (rc)
		snprintf(j->why, sizeof(j->why), "%s", P.errormsg());
	if (cfg)
		P.config_delete(&cfg);
	if (src)
		P.source_delete(&src);
	j->rc = rc ? -ENOTSUP : 0;
	return NULL;
}

/* pmem2_map_new finds the platform's persistence domain with fts(3), which
 * changes into /sys/bus/nd/devices and back: the process's working
 * directory, which every thread shares, moves meanwhile. Another thread's
 * relative path then resolves there (seen in the lab: an application's
 * open("append.dat", O_CREAT) failed with EACCES while the library learnt
 * the primitives). So the map is made on a thread of its own that first
 * unshares its file system context (CLONE_FS: working directory, root,
 * umask), with every signal blocked (the application's are not its). */
static int map_isolated(struct map_job *j)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	int rc = pthread_create(&t, NULL, map_job_run, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		snprintf(j->why, sizeof(j->why), "pthread_create: %s", strerror(rc));
		return -ENOTSUP;
	}
	pthread_join(t, NULL);
	return j->rc;
}

int sfs_pmem_map(int fd, size_t len, struct sfs_pmem_map *m)
{
	m->addr = NULL;
	if (!is_dax(fd))
		return -ENOTSUP;
	sfs_mutex_lock(&load_lock);
	if (!load_tried && !closed) {
		load_tried = true;
		load();
	}
	struct map_job j = {.fd = fd, .len = len};
	int rc = closed ? -ECANCELED : loaded ? map_isolated(&j) : -ENOTSUP;
	sfs_mutex_unlock(&load_lock);
	if (rc == -ECANCELED)
		return rc;
	if (!loaded)
		return -ENOTSUP;
	if (rc) {
		static atomic_bool told;
		if (!atomic_exchange(&told, true))
			sfs_warn("DAX file, but libpmem2 cannot map it (%s): "
				 "the system-call path is used",
				 j.why);
		return -ENOTSUP;
	}
	struct pmem2_map *map = j.map;
	if (!atomic_load_explicit(&have_fns, memory_order_acquire)) {
		static pthread_mutex_t fns_lock = PTHREAD_MUTEX_INITIALIZER;
		sfs_mutex_lock(&fns_lock);
		if (!atomic_load_explicit(&have_fns, memory_order_relaxed)) {
			drain_fn = P.get_drain_fn(map);
			copy_fn = P.get_memcpy_fn(map);
			atomic_store_explicit(&have_fns, true, memory_order_release);
		}
		sfs_mutex_unlock(&fns_lock);
	}
	m->addr = P.map_get_address(map);
	m->len = len;
	m->map = map;
	sfs_stat_event(SFS_EV_dax_maps, 1);
	return 0;
}

void sfs_pmem_drain(void)
{
	drain_fn();
	sfs_stat_event(SFS_EV_dax_fences, 1);
}

void sfs_pmem_writev(struct sfs_pmem_map *m, uint64_t off, const struct iovec *v, int cnt)
{
	char *p = m->addr + off;
	size_t total = 0;
	for (int i = 0; i < cnt; i++) {
		copy_fn(p, v[i].iov_base, v[i].iov_len, PMEM2_F_MEM_NODRAIN);
		p += v[i].iov_len;
		total += v[i].iov_len;
	}
	sfs_pmem_drain();
	sfs_stat_event(SFS_EV_dax_bytes, total);
}

bool sfs_pmem_ready(void)
{
	return atomic_load_explicit(&have_fns, memory_order_acquire);
}

SFS_HOT static atomic_bool gave_up;
SFS_HOT static atomic_bool learning; /* claimed: the background thread is on it */

bool sfs_pmem_learn_claim(void)
{
	return !sfs_pmem_ready() && !atomic_load(&gave_up) && !atomic_exchange(&learning, true);
}

bool sfs_pmem_gave_up(void)
{
	return atomic_load(&gave_up);
}

void sfs_pmem_learn_unclaim(void)
{
	SFS_SET(learning, false);
}

bool sfs_pmem_learn(int fd)
{
	if (sfs_pmem_ready())
		return true;
	if (atomic_load(&gave_up))
		return false;
	/* libpmem2 hands out its primitives for a map of its own: one page. */
	struct sfs_pmem_map m;
	int rc = sfs_pmem_map(fd, 4096, &m);
	if (rc == -ECANCELED) /* the process exits */
		return false;
	if (rc) {
		atomic_store(&gave_up, true); /* reported by sfs_pmem_map */
		return false;
	}
	sfs_pmem_unmap(&m);
	return true;
}

void *sfs_pmem_copy_nodrain(void *dst, const void *src, size_t n)
{
	copy_fn(dst, src, n, PMEM2_F_MEM_NODRAIN);
	sfs_stat_event(SFS_EV_dax_bytes, n);
	return dst;
}

void sfs_pmem_atfork_prepare(void)
{
	sfs_mutex_lock(&load_lock);
}

void sfs_pmem_atfork_parent(void)
{
	sfs_mutex_unlock(&load_lock);
}

void sfs_pmem_atfork_child(void)
{
	sfs_mutex_reset_child(&load_lock);
}

void sfs_pmem_unmap(struct sfs_pmem_map *m)
{
	if (!m->addr)
		return;
	struct pmem2_map *map = m->map;
	sfs_mutex_lock(&load_lock);
	if (!closed)
		P.map_delete(&map);
	sfs_mutex_unlock(&load_lock);
	m->addr = NULL;
	m->map = NULL;
}
