/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "pmem.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "msg.h"
#include "stats.h"

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

/* The libpmem2 entry points used, resolved once from the dlopen'ed library. */
static struct {
	int (*source_from_fd)(struct pmem2_source **, int);
	int (*source_delete)(struct pmem2_source **);
	int (*config_new)(struct pmem2_config **);
	int (*config_delete)(struct pmem2_config **);
	int (*config_set_required_store_granularity)(struct pmem2_config *,
						     enum pmem2_granularity);
	int (*config_set_length)(struct pmem2_config *, size_t);
	int (*map_new)(struct pmem2_map **, const struct pmem2_config *,
		       const struct pmem2_source *);
	int (*map_delete)(struct pmem2_map **);
	void *(*map_get_address)(struct pmem2_map *);
	pmem2_memcpy_fn (*get_memcpy_fn)(struct pmem2_map *);
	pmem2_drain_fn (*get_drain_fn)(struct pmem2_map *);
	const char *(*errormsg)(void);
} P;
static bool loaded;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
/* The primitives of the first map: they depend on the CPU and the platform's
 * persistence domain, the same for every DAX mapping of the process. */
static pmem2_memcpy_fn copy_fn;
static pmem2_drain_fn drain_fn;

/* Whether the kernel serves fd with DAX (statx STATX_ATTR_DAX). */
static bool is_dax(int fd)
{
	struct statx sx;
	return statx(fd, "", AT_EMPTY_PATH, 0, &sx) == 0 && (sx.stx_attributes & STATX_ATTR_DAX);
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
}

int sfs_pmem_map(int fd, size_t len, struct sfs_pmem_map *m)
{
	m->addr = NULL;
	if (!is_dax(fd))
		return -ENOTSUP;
	pthread_once(&load_once, load);
	if (!loaded)
		return -ENOTSUP;
	struct pmem2_source *src = NULL;
	struct pmem2_config *cfg = NULL;
	struct pmem2_map *map = NULL;
	/* Cache-line granularity at most: a mapping that would need msync
	 * (page granularity) is no use here. */
	int rc = P.source_from_fd(&src, fd);
	if (!rc)
		rc = P.config_new(&cfg);
	if (!rc)
		rc = P.config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_CACHE_LINE);
	if (!rc)
		rc = P.config_set_length(cfg, len);
	if (!rc)
		rc = P.map_new(&map, cfg, src);
	if (rc) {
		static atomic_bool told;
		if (!atomic_exchange(&told, true))
			sfs_warn("DAX file, but libpmem2 cannot map it (%s): "
				 "the system-call path is used",
				 P.errormsg());
		rc = -ENOTSUP;
	}
	if (cfg)
		P.config_delete(&cfg);
	if (src)
		P.source_delete(&src);
	if (rc)
		return rc;
	if (!copy_fn) {
		drain_fn = P.get_drain_fn(map);
		copy_fn = P.get_memcpy_fn(map);
	}
	m->addr = P.map_get_address(map);
	m->len = len;
	m->map = map;
	sfs_stat_event(SFS_EV_dax_maps, 1);
	return 0;
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
	drain_fn();
	sfs_stat_event(SFS_EV_dax_fences, 1);
	sfs_stat_event(SFS_EV_dax_bytes, total);
}

void sfs_pmem_unmap(struct sfs_pmem_map *m)
{
	if (!m->addr)
		return;
	struct pmem2_map *map = m->map;
	P.map_delete(&map);
	m->addr = NULL;
	m->map = NULL;
}
