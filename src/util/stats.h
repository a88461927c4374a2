/* SPDX-License-Identifier: Apache-2.0 */
/* Per-call and per-event counters (SPLITFS_STATS=1), printed once at exit.
 * Each list below is the single source of the enum, the names and the
 * counter array; the wrappers themselves stay written out. */
#ifndef SFS_UTIL_STATS_H
#define SFS_UTIL_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* One counter a row (the formatter would pack the rows). */
/* clang-format off */
/* Calls served or passed through by the library, by family. */
#define SFS_CALLS(X)                                                                               \
	X(open)                                                                                    \
	X(close)                                                                                   \
	X(read)                                                                                    \
	X(write)                                                                                   \
	X(pread)                                                                                   \
	X(pwrite)                                                                                  \
	X(readv)                                                                                   \
	X(writev)                                                                                  \
	X(lseek)                                                                                   \
	X(fsync)                                                                                   \
	X(fdatasync)                                                                               \
	X(truncate)                                                                                \
	X(fallocate)                                                                               \
	X(stat)                                                                                    \
	X(dup)                                                                                     \
	X(fcntl)                                                                                   \
	X(mmap)                                                                                    \
	X(xfer)                                                                                    \
	X(unlink)                                                                                  \
	X(rename)                                                                                  \
	X(exec)                                                                                    \
	X(fork)                                                                                    \
	X(stdio)                                                                                   \
	X(ioctl)

/* Events inside the library. */
#define SFS_EVENTS(X)                                                                              \
	X(relink_exchange)                                                                         \
	X(relink_clone)                                                                            \
	X(relink_copy)                                                                             \
	X(relink_bytes)                                                                            \
	X(relink_ns)                                                                               \
	X(relink_pieces)                                                                           \
	X(relink_pieces_lowered)                                                                   \
	X(staged_bytes)                                                                            \
	X(staging_windows)                                                                         \
	X(staging_files_made)                                                                      \
	X(map_chunks)                                                                              \
	X(map_budget_full)                                                                         \
	X(kernel_fallbacks)                                                                        \
	X(kernel_overwrites)                                                                       \
	X(kernel_appends)                                                                          \
	X(dsync_overwrites)                                                                        \
	X(dsync_unlocked)                                                                          \
	X(dsync_appends)                                                                           \
	X(logged_unlocked)                                                                         \
	X(demotions)                                                                               \
	X(guard_faults)                                                                            \
	X(log_records)                                                                             \
	X(log_bytes)                                                                               \
	X(log_checkpoints)                                                                         \
	X(log_lanes)                                                                               \
	X(log_lane_failures)                                                                       \
	X(log_rewrites)                                                                            \
	X(log_commits)                                                                             \
	X(recovered_logs)                                                                          \
	X(recovered_records)                                                                       \
	X(dax_maps)                                                                                \
	X(dax_logs)                                                                                \
	X(dax_fences)                                                                              \
	X(dax_bytes)                                                                               \
	X(dax_stores)                                                                              \
	X(dax_syncs)                                                                               \
	X(dax_unflushed)                                                                           \
	X(leases)                                                                                  \
	X(lease_breaks)                                                                            \
	X(lease_refused)                                                                           \
	X(adopted_stores)                                                                          \
	X(unleased_ops)                                                                            \
	X(strict_not_atomic)                                                                       \
	X(read_retries)                                                                            \
	X(locked_reads)                                                                            \
	X(fork_taken_back)                                                                         \
	X(pending_opens)                                                                           \
	X(pending_reads)                                                                           \
	X(pending_writes)                                                                          \
	X(pending_promoted)                                                                        \
	X(share_sessions)                                                                          \
	X(share_stores)                                                                            \
	X(ahead_unmaps)                                                                            \
	X(cold_writes)                                                                             \
	X(ahead_small_folios)                                                                      \
	X(small_folio_pwrites)                                                                     \
	X(log_syncs)                                                                               \
	X(log_syncs_empty)                                                                         \
	X(log_unavailable)
/* clang-format on */

enum sfs_call {
#define SFS_X(n) SFS_CALL_##n,
	SFS_CALLS(SFS_X)
#undef SFS_X
		SFS_CALL_COUNT
};

enum sfs_event {
#define SFS_X(n) SFS_EV_##n,
	SFS_EVENTS(SFS_X)
#undef SFS_X
		SFS_EV_COUNT
};

struct sfs_call_stat {
	atomic_uint_fast64_t count;	  /* calls on managed files */
	atomic_uint_fast64_t bytes;	  /* bytes moved by those calls */
	atomic_uint_fast64_t ns;	  /* wall time spent in the timed ones */
	atomic_uint_fast64_t timed;	  /* how many were timed (sfs_stat_call_start) */
	atomic_uint_fast64_t passthrough; /* calls on managed files sent to the kernel */
};

extern bool sfs_stats_on;
extern atomic_uint_fast64_t sfs_event_stats[SFS_EV_COUNT];

static inline void sfs_stat_event(enum sfs_event ev, uint64_t n)
{
	if (sfs_stats_on)
		atomic_fetch_add_explicit(&sfs_event_stats[ev], n, memory_order_relaxed);
}

uint64_t sfs_now_ns(void);

/* A timer: start returns 0 when stats are off, so the clock is read only
 * when someone asked for the numbers. */
static inline uint64_t sfs_stat_start(void)
{
	return sfs_stats_on ? sfs_now_ns() : 0;
}

/* The timer of one call of c, for sfs_stat_call_end: 0 (not timed) when
 * stats are off, and for most calls when they are on. Two clock reads
 * cost a 4 KiB pread served from a mapping a sixth of its time here
 * (42 of 250 ns), so the first SFS_STAT_ALL_TIMED calls of each kind (in
 * each shard of the counters, stats.c) are timed, and then one in
 * SFS_STAT_SAMPLE of a thread's calls, drawn at random: the table scales
 * the time by count / timed. Counts and bytes stay exact. */
#define SFS_STAT_ALL_TIMED 64
#define SFS_STAT_SAMPLE 16
uint64_t sfs_stat_call_start_slow(enum sfs_call c);
static inline uint64_t sfs_stat_call_start(enum sfs_call c)
{
	return sfs_stats_on ? sfs_stat_call_start_slow(c) : 0;
}

/* Counts a call of c that moved bytes; start: its sfs_stat_call_start
 * (or sfs_stat_start: always timed). */
void sfs_stat_call_end(enum sfs_call c, uint64_t start, uint64_t bytes, bool passthrough);

/* Writes the table to fd (stderr or SPLITFS_STATS_FILE). */
void sfs_stats_print(int fd, const char *reason);

/* At start-up: notes what fd 2 is. */
void sfs_stats_note_stderr(void);

/* At the start on the root (init.c), the first time the process may print
 * them: opens SPLITFS_STATS_FILE if set. A process that never starts there
 * prints none, and opens nothing. */
void sfs_stats_open_output(void);

/* Prints the table (SPLITFS_STATS) where SPLITFS_STATS_FILE says, or to
 * stderr if fd 2 is still what it was at start. */
void sfs_print_stats(const char *reason);

/* Resets every counter (a forked child starts from zero). */
void sfs_stats_reset(void);

#endif
