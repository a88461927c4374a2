/* SPDX-License-Identifier: Apache-2.0 */
/* The operation log's file (format.h): writing records, and making a log or
 * taking a free one. Internal to oplog/. */
#ifndef SFS_OPLOG_LOGFILE_H
#define SFS_OPLOG_LOGFILE_H

#include <stdint.h>
#include <sys/uio.h>

#include "../util/pmem.h"
#include "format.h"

/* Writes record e (its payload in iov) at off with one synchronous write,
 * or on DAX (pm: the log mapped) with stores and one fence: entry, payload,
 * zero padding to the next 64 bytes. The CRC covers entry and payload. 0 or
 * -errno. At most 64 iovecs. */
int sfs_logfile_write_record(int fd, struct sfs_pmem_map *pm, struct sfs_log_entry *e,
			     const struct iovec *iov, int cnt, uint64_t off);

/* Writes the header of generation gen (this boot and mount) of lane `lane`
 * (0: the main log) of the log set whose nonce is set. */
int sfs_logfile_write_header(int fd, uint64_t gen, uint64_t size, uint64_t set, unsigned lane);

/* The generation in a log's header, or 0 if it has none. */
uint64_t sfs_logfile_read_gen(int fd);

/* A log's size unless SPLITFS_LOG_SIZE says: sync and strict modes log
 * every write, and a larger log checkpoints less often; POSIX mode logs
 * only the small syncs of a few files (fs/logsync.h), and a process that
 * makes its log writes it whole first (16 MiB: 9-12 ms, the cost of a
 * program's first 30 served syncs three times over; 2 MiB: 2-3 ms). */
#define SFS_LOG_SIZE_DURABLE (16ull << 20)
#define SFS_LOG_SIZE_POSIX (2ull << 20)

/* The log's size: SPLITFS_LOG_SIZE (or the mode's, above), or what the
 * application's RLIMIT_FSIZE lets the library write (whole MiBs; the limit
 * is the application's to meet, never the library's). 0: no log fits. */
uint64_t sfs_logfile_size(void);

/* A free log (given back by a process that exited cleanly) of this user's,
 * of the right size, locked and renamed to name; its fd, or -1. */
int sfs_logfile_claim_free(const char *name, uint64_t size);

/* A new log: an unnamed file, zero-filled, locked, with its header
 * (generation 1, lane `lane` of set), durable; then named name, durably.
 * Its fd, or -errno. */
int sfs_logfile_create(const char *name, uint64_t size, uint64_t set, unsigned lane);

#endif
