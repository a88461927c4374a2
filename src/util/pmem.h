/* SPDX-License-Identifier: Apache-2.0 */
/* Persistence on DAX (persistent memory mapped straight into the process):
 * a file on a DAX file system is mapped with MAP_SYNC and written with
 * cache-line flushes (or non-temporal stores) and one fence, which makes the
 * bytes durable without a system call. The primitives are PMDK's libpmem2
 * (pmem2_get_memcpy_fn / pmem2_get_drain_fn pick clwb, clflushopt or
 * non-temporal stores and see eADR); it is loaded with dlopen the first
 * time a DAX file needs it, so a process on a page-cache file system never
 * pays for it (libpmem2 pulls in libndctl, libdaxctl, libudev, libcrypto).
 *
 * Without DAX (or without libpmem2) sfs_pmem_map fails with -ENOTSUP and
 * the caller keeps its system-call path. */
#ifndef SFS_UTIL_PMEM_H
#define SFS_UTIL_PMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct sfs_pmem_map {
	char *addr; /* NULL: not mapped */
	size_t len;
	void *map; /* struct pmem2_map * */
};

/* Maps the first len bytes of fd (which must already be that long and
 * allocated) with MAP_SYNC through libpmem2, requiring cache-line (or byte)
 * store granularity: 0, or -ENOTSUP when fd is not DAX or libpmem2 cannot be
 * loaded (the reason is reported once), -ECANCELED once the process exits
 * (libpmem2's destructor may have run), or another -errno. */
int sfs_pmem_map(int fd, size_t len, struct sfs_pmem_map *m);

/* Copies the vector to off with non-temporal stores or flushes, then one
 * fence: durable on return. off + the vector's length must lie in the map. */
void sfs_pmem_writev(struct sfs_pmem_map *m, uint64_t off, const struct iovec *v, int cnt);

/* Whether fd is served with DAX (statx), remembered per process for the
 * root's file system when it is not. */
bool sfs_pmem_file_is_dax(int fd);

/* Whether the primitives are known (sfs_pmem_copy_nodrain/drain may be
 * called). libpmem2 picks them per map; they are the same for every DAX
 * mapping of the process. */
bool sfs_pmem_ready(void);

/* Learns them from a map of the first page of fd (a DAX file at least 4 KiB
 * long, not one of the library's hidden descriptors: libpmem2 calls fcntl
 * on it). False when it cannot (reported once; no later call tries again). */
bool sfs_pmem_learn(int fd);

/* Learning costs the dlopen of libpmem2 and its first map: 1.6 ms here,
 * 40-60 ms in the lab's emulated guest, which no write should wait for.
 * sfs_pmem_learn_claim is true for one caller while the primitives are
 * neither known nor given up on: that caller asks the background thread
 * (sfs_staging_learn_pmem), which calls sfs_pmem_learn on a file of its
 * own; sfs_pmem_learn_unclaim gives the claim back (no file could be made;
 * a forked child, whose parent's thread held it). sfs_pmem_gave_up:
 * learning failed for good. */
bool sfs_pmem_learn_claim(void);
bool sfs_pmem_gave_up(void);
void sfs_pmem_learn_unclaim(void);

/* pthread_atfork handlers (fs/process.c): a fork waits for a load of
 * libpmem2 or a map made with it that another thread has in flight. */
void sfs_pmem_atfork_prepare(void);
void sfs_pmem_atfork_parent(void);
void sfs_pmem_atfork_child(void);

/* Copies n bytes to dst, which lies in a MAP_SYNC mapping of a DAX file,
 * with libpmem2's memcpy (non-temporal stores or cache-line flushes) but
 * no fence; sfs_pmem_drain then waits for all of them (one fence). memcpy's
 * signature, for sfs_guarded_copy_by. Only once sfs_pmem_ready(). */
void *sfs_pmem_copy_nodrain(void *dst, const void *src, size_t n);
void sfs_pmem_drain(void);

/* Unmaps (the mapping is the process's own; a forked child calls it on
 * its inherited copy); once the process exits, leaves it to the end. */
void sfs_pmem_unmap(struct sfs_pmem_map *m);

/* From exit's handlers and the library's destructor: waits for a load of libpmem2 or a map in
 * flight; from then on no map is made or deleted (sfs_pmem_map fails with
 * -ECANCELED, sfs_pmem_unmap leaves the mapping to the process's end).
 * _dl_fini calls the destructors in the order of the list of loaded
 * objects, but for dependencies: the preloaded library's before those of
 * the objects it dlopen'ed (LD_DEBUG=files shows it), so libpmem2's
 * destructor, which frees its table of maps, runs after this. */
void sfs_pmem_close(void);

#endif
