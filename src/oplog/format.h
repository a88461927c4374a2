/* SPDX-License-Identifier: Apache-2.0 */
/* The operation log's on-media format (sync and strict modes).
 *
 * A log is a file in <root>/.splitfs, pre-allocated and zero-filled (so a
 * synchronous write into it needs no metadata change), owned by its
 * process's user, mode 0600, named only once it is locked (flock) and has
 * its header. A process has one log set: its main log, log.<pid>.<ns>, and,
 * while several of its threads write durably at once, up to
 * SFS_LOG_LANES - 1 lanes, lane.<pid>.<ns>.<k> (k from 1), made the same
 * way: one file's synchronous writes do not scale with threads on XFS, a
 * file per writer does (bench/results/2026-11-27-logscale-device). Little-
 * endian, 64-byte units:
 *
 *   offset 0     the header record (op SFS_LOG_HEADER): magic, generation,
 *                and as payload the boot and mount it was written on
 *                (struct sfs_log_ident)
 *   offset 4096  the strict mode's writes in flight (struct sfs_log_inflight,
 *                plain stores through a mapping, never synced)
 *   offset 8192  records: a 64-byte entry, then its payload padded to 64
 *
 * Recovery on the same mount (boot and mount ids equal) knows every write
 * that returned is in the page cache already (the process died, not the
 * machine): it replays only the strict writes that were in flight, whose
 * application a kill may have cut short. After a crash (another boot, or
 * the file system shut down and mounted again) it replays every record.
 * Every record carries the log's generation; a checkpoint makes every file
 * complete and durable, then rewrites the header with the next generation,
 * which kills all older records at once (the file is reused from offset 64,
 * never zeroed again). Each record's CRC32C covers the entry (crc field as
 * zero) and its payload, so a torn record is recognised and skipped. Records
 * are written by several threads at offsets claimed with compare-and-swap;
 * recovery orders them by seq.
 *
 * In a set, the main log's header alone holds the generation (one write
 * kills the records of every lane at once) and its page alone the in-flight
 * table; a lane's header names its set and number (struct sfs_log_ident).
 * Generation, record numbers and file ids belong to the set: a record in
 * any lane is live if it carries the main header's generation and the set's
 * nonce, and recovery merges the lanes' records by seq. The nonce, random
 * per set and in every record, keeps the records of a log file's earlier
 * use (another set, since it was freed and taken again) dead whatever their
 * generation. Logs of older versions have nonce 0 and no lanes.
 *
 * Records:
 *   FILE      binds `file` (an id local to this log and generation) to a
 *             file: off = inode number, arg = i_generation (or 0), payload =
 *             its struct file_handle (handle_bytes, handle_type, f_handle)
 *             followed by the path at the time (NUL-terminated). Long paths
 *             simply make the payload span more 64-byte units.
 *   WRITE     file, off, payload = the bytes written there; arg = the file's
 *             logical size after the write. Older versions' (this one
 *             writes WRITE_TIMED).
 *   TRUNCATE  file, off = the new size; arg = the time it was logged
 *             (CLOCK_REALTIME, ns; 0 in older versions' logs), which
 *             replay gives the file as its modification time when this is
 *             its last record.
 *   COMMIT    file: everything logged for it before this record is in the
 *             file itself, durably (after a per-file checkpoint); replay
 *             skips it. Written by the owner (when the file leaves it:
 *             closed, its lease broken, checkpointed).
 *   WRITE_TIMED  as WRITE, and the file's modification time with it: the
 *             payload is a struct sfs_log_mtime, then the bytes. Replay
 *             gives the file that time when this is its last record, not
 *             the replay's own: a synchronous write or fsync makes the
 *             time durable with the bytes. A write of sync or strict mode
 *             is logged before it is applied: the time then is when it
 *             was logged (the kernel's for the write is a moment later);
 *             for POSIX mode's syncs served by the log (fs/logsync.h), when
 *             the sync logged it (a moment after the last write). Older
 *             recoveries step over it (an op they do not know). */
#ifndef SFS_OPLOG_FORMAT_H
#define SFS_OPLOG_FORMAT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../util/compiler.h"

#define SFS_LOG_MAGIC_V1 0x31474f4c53465353ull /* "SSFSLOG1": records at 64, no ident */
#define SFS_LOG_MAGIC 0x32474f4c53465353ull    /* "SSFSLOG2" */
#define SFS_LOG_UNIT 64
#define SFS_LOG_INFLIGHT_OFF 4096
#define SFS_LOG_INFLIGHT_SLOTS 128
#define SFS_LOG_RECORDS_OFF 8192
#define SFS_LOG_LANES 16 /* the main log and up to 15 lanes */

enum sfs_log_op {
	SFS_LOG_HEADER = 1,
	SFS_LOG_FILE = 2,
	SFS_LOG_WRITE = 3,
	SFS_LOG_TRUNCATE = 4,
	SFS_LOG_COMMIT = 5,
	SFS_LOG_WRITE_TIMED = 6,
};
#define SFS_LOG_OP_LAST SFS_LOG_WRITE_TIMED

struct sfs_log_entry {
	uint32_t crc;	 /* CRC32C of the entry (this field 0) and the payload */
	uint8_t op;	 /* enum sfs_log_op */
	uint8_t version; /* 1 */
	uint16_t reserved;
	uint32_t payload; /* payload bytes (the record is padded to 64) */
	uint32_t file;	  /* file id (FILE, WRITE, TRUNCATE, COMMIT) */
	uint64_t gen;	  /* the log generation this record belongs to */
	uint64_t seq;	  /* order of the record within its generation */
	uint64_t off;	  /* WRITE: file offset; TRUNCATE: size; FILE: ino;
			   * HEADER: SFS_LOG_MAGIC */
	uint64_t arg;	  /* WRITE: size after; FILE: i_generation; HEADER: log size */
	uint64_t pid;	  /* the process that wrote it */
	uint64_t set;	  /* the log set's nonce (0: a log without lanes) */
};
static_assert(sizeof(struct sfs_log_entry) == SFS_LOG_UNIT, "a log entry is 64 bytes");
static_assert(offsetof(struct sfs_log_entry, crc) == 0, "crc first");
static_assert(offsetof(struct sfs_log_entry, payload) == 8, "entry layout");
static_assert(offsetof(struct sfs_log_entry, gen) == 16, "entry layout");
static_assert(offsetof(struct sfs_log_entry, seq) == 24, "entry layout");
static_assert(offsetof(struct sfs_log_entry, off) == 32, "entry layout");
static_assert(offsetof(struct sfs_log_entry, arg) == 40, "entry layout");

/* The head of a WRITE_TIMED record's payload: st_mtim. */
struct sfs_log_mtime {
	int64_t sec;
	int64_t nsec;
};
static_assert(sizeof(struct sfs_log_mtime) == 16, "a WRITE_TIMED's time is 16 bytes");

/* The header's payload: where the log was written, and its set. */
struct sfs_log_ident {
	uint8_t boot_id[16];
	uint64_t mnt_id;
	uint64_t set;  /* the set's nonce (0: a log without lanes) */
	uint64_t lane; /* 0: the main log; k: lane k of the set */
	uint64_t spare[3];
};
static_assert(sizeof(struct sfs_log_ident) == SFS_LOG_UNIT, "the ident is one unit");
static_assert(offsetof(struct sfs_log_ident, set) == 24, "ident layout");
static_assert(offsetof(struct sfs_log_ident, lane) == 32, "ident layout");
static_assert(offsetof(struct sfs_log_entry, set) == 56, "entry layout");

/* A strict write being applied to its file: its record's generation and
 * number, and when it started (CLOCK_REALTIME ns). */
enum { SFS_INFLIGHT_IDLE = 0, SFS_INFLIGHT_CLAIMED = 1, SFS_INFLIGHT_APPLYING = 2 };
struct sfs_log_inflight {
	_Atomic uint32_t state;
	uint32_t file;
	uint64_t gen;
	uint64_t seq;
	int64_t started_ns;
};
static_assert(sizeof(struct sfs_log_inflight) == 32, "in-flight slot layout");
static_assert(SFS_LOG_INFLIGHT_SLOTS * sizeof(struct sfs_log_inflight) <=
		      SFS_LOG_RECORDS_OFF - SFS_LOG_INFLIGHT_OFF,
	      "the in-flight table fits its page");

/* The name of lane k of the set whose main log is named main_name
 * ("log.<pid>.<ns>" -> "lane.<pid>.<ns>.<k>"; main names are under 64
 * bytes): what the library names a lane and recovery looks for. Returns
 * snprintf's count. */
static inline int sfs_log_lane_name(char *buf, size_t n, const char *main_name, unsigned k)
{
	return snprintf(buf, n, "lane.%.64s.%u", main_name + 4, k);
}

/* Bytes a record takes in the log. */
static inline uint64_t sfs_log_record_len(uint32_t payload)
{
	return SFS_LOG_UNIT + SFS_ALIGN_UP((uint64_t)payload, (uint64_t)SFS_LOG_UNIT);
}

/* The CRC of a record (entry with crc zeroed, then payload). */
uint32_t sfs_log_crc(const struct sfs_log_entry *e, const void *payload);

/* Whether e's header is one of a record of generation gen (op known) that
 * fits in the room bytes from e on; valid: its checksum is right too. */
bool sfs_log_record_framed(const struct sfs_log_entry *e, uint64_t gen, uint64_t room);
bool sfs_log_record_valid(const struct sfs_log_entry *e, uint64_t gen, uint64_t room);

/* qsort's order of an array of record pointers: by seq (the order the
 * records were written in, whichever lane holds them). */
int sfs_log_entry_by_seq(const void *a, const void *b);

#endif
