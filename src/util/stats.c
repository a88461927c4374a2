/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "stats.h"

#include <errno.h>
#include <stdalign.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"
#include "msg.h"
#include "../sys/global.h"
#include "../sys/real.h"
#include "../sys/self.h"

SFS_HOT bool sfs_stats_on;
/* The call counters, in SHARDS copies on their own cache lines: a thread
 * adds to its shard's (threads take them in turn), so that threads making
 * calls at once do not pass the same lines between their cores. FxMark
 * DRBL, 2 threads each reading its own file, stats on: 17.3-17.8 million
 * reads a second with one set of counters, 23.6-24.5 million with shards
 * (28.5-30.2 million with stats off). The table sums the shards. */
#define SHARDS 8
struct call_shard {
	alignas(64) struct sfs_call_stat calls[SFS_CALL_COUNT];
};
static struct call_shard shards[SHARDS];
static __thread struct sfs_call_stat *my_calls __attribute__((tls_model("initial-exec")));

static struct sfs_call_stat *shard_calls(void)
{
	if (sfs_likely(my_calls != NULL))
		return my_calls;
	static atomic_uint next;
	unsigned i = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) % SHARDS;
	return my_calls = shards[i].calls;
}
atomic_uint_fast64_t sfs_event_stats[SFS_EV_COUNT];

static const char *const call_names[] = {
#define SFS_X(n) #n,
	SFS_CALLS(SFS_X)
#undef SFS_X
};
static_assert(SFS_ARRAY_SIZE(call_names) == SFS_CALL_COUNT, "one name per call");

static const char *const event_names[] = {
#define SFS_X(n) #n,
	SFS_EVENTS(SFS_X)
#undef SFS_X
};
static_assert(SFS_ARRAY_SIZE(event_names) == SFS_EV_COUNT, "one name per event");

uint64_t sfs_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A thread's sampling draws: random, not every n-th call, so that a
 * program's own period (a relink every 64 appends) cannot line up with the
 * samples. xorshift32, seeded per thread from its first clock read. */
static __thread uint32_t stat_draw __attribute__((tls_model("initial-exec")));

uint64_t sfs_stat_call_start_slow(enum sfs_call c)
{
	uint32_t x = stat_draw;
	if (!x)
		x = (uint32_t)sfs_now_ns() | 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	stat_draw = x;
	if (atomic_load_explicit(&shard_calls()[c].timed, memory_order_relaxed) <
		    SFS_STAT_ALL_TIMED ||
	    x % SFS_STAT_SAMPLE == 0)
		return sfs_now_ns();
	return 0;
}

void sfs_stat_call_end(enum sfs_call c, uint64_t start, uint64_t bytes, bool passthrough)
{
	if (!sfs_stats_on)
		return;
	struct sfs_call_stat *s = &shard_calls()[c];
	atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
	if (bytes)
		atomic_fetch_add_explicit(&s->bytes, bytes, memory_order_relaxed);
	if (start) {
		atomic_fetch_add_explicit(&s->ns, sfs_now_ns() - start, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->timed, 1, memory_order_relaxed);
	}
	if (passthrough)
		atomic_fetch_add_explicit(&s->passthrough, 1, memory_order_relaxed);
}

void sfs_stats_reset(void)
{
	if (!sfs_stats_on)
		return; /* nothing was counted: the pages stay the parent's */
	memset(shards, 0, sizeof(shards));
	memset(sfs_event_stats, 0, sizeof(sfs_event_stats));
}

static uint64_t ld(atomic_uint_fast64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* Call c's counters, summed over the shards. */
static struct call_sum {
	uint64_t count, bytes, ns, timed, passthrough;
} call_sum(int c)
{
	struct call_sum t = {0};
	for (int i = 0; i < SHARDS; i++) {
		struct sfs_call_stat *s = &shards[i].calls[c];
		t.count += ld(&s->count);
		t.bytes += ld(&s->bytes);
		t.ns += ld(&s->ns);
		t.timed += ld(&s->timed);
		t.passthrough += ld(&s->passthrough);
	}
	return t;
}

void sfs_stats_print(int fd, const char *reason)
{
	char line[256];
	extern char *program_invocation_short_name;
	int n = snprintf(line, sizeof(line),
			 "splitfs stats: pid %d %s (%s)\n%-10s %12s %14s %12s %10s %12s\n",
			 (int)getpid(), program_invocation_short_name, reason, "call", "count",
			 "bytes", "total_ms", "avg_ns", "kernel");
	sfs_write_all(fd, line, (size_t)n);
	for (int i = 0; i < SFS_CALL_COUNT; i++) {
		struct call_sum t = call_sum(i);
		if (!t.count)
			continue;
		/* The timed calls' time, scaled to all of them. */
		uint64_t ns =
			t.timed ? (uint64_t)((double)t.ns * (double)t.count / (double)t.timed) : 0;
		n = snprintf(line, sizeof(line), "%-10s %12llu %14llu %12.3f %10llu %12llu\n",
			     call_names[i], (unsigned long long)t.count,
			     (unsigned long long)t.bytes, (double)ns / 1e6,
			     (unsigned long long)(ns / t.count), (unsigned long long)t.passthrough);
		sfs_write_all(fd, line, (size_t)n);
	}
	for (int i = 0; i < SFS_EV_COUNT; i++) {
		uint64_t v = ld(&sfs_event_stats[i]);
		if (!v)
			continue;
		n = snprintf(line, sizeof(line), "event %-20s %14llu\n", event_names[i],
			     (unsigned long long)v);
		sfs_write_all(fd, line, (size_t)n);
	}
	struct rusage ru;
	bool have_ru = getrusage(RUSAGE_SELF, &ru) == 0;
	/* Per data operation (the read and write families): the process's page
	 * faults (all of them, start-up included), the fences and cache lines
	 * stored to pmem (flushed or non-temporal), the relinks. */
	uint64_t ops = 0;
	static const enum sfs_call data_calls[] = {SFS_CALL_read,  SFS_CALL_write,
						   SFS_CALL_pread, SFS_CALL_pwrite,
						   SFS_CALL_readv, SFS_CALL_writev};
	for (size_t i = 0; i < SFS_ARRAY_SIZE(data_calls); i++)
		ops += call_sum(data_calls[i]).count;
	if (ops && have_ru) {
		uint64_t relinks = ld(&sfs_event_stats[SFS_EV_relink_exchange]) +
				   ld(&sfs_event_stats[SFS_EV_relink_clone]) +
				   ld(&sfs_event_stats[SFS_EV_relink_copy]);
		n = snprintf(
			line, sizeof(line),
			"per_op data_ops %llu minflt %.3f dax_fences %.3f dax_lines %.2f relinks %.5f\n",
			(unsigned long long)ops, (double)ru.ru_minflt / (double)ops,
			(double)ld(&sfs_event_stats[SFS_EV_dax_fences]) / (double)ops,
			(double)(ld(&sfs_event_stats[SFS_EV_dax_bytes]) / 64) / (double)ops,
			(double)relinks / (double)ops);
		sfs_write_all(fd, line, (size_t)n);
	}
	if (have_ru) {
		n = snprintf(
			line, sizeof(line),
			"rusage minflt %ld majflt %ld utime %ld.%06lds stime %ld.%06lds maxrss %ldKiB\n",
			ru.ru_minflt, ru.ru_majflt, (long)ru.ru_utime.tv_sec,
			(long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
			(long)ru.ru_stime.tv_usec, ru.ru_maxrss);
		sfs_write_all(fd, line, (size_t)n);
	}
}

void sfs_stats_note_stderr(void)
{
	if (!sfs_g.opt.stats)
		return; /* nothing is printed: no system call at start */
	struct stat st;
	if (SFS_REAL(fstat)(2, &st) == 0) {
		sfs_g.stderr_dev = st.st_dev;
		sfs_g.stderr_ino = st.st_ino;
	}
}

void sfs_stats_open_output(void)
{
	if (!sfs_g.opt.stats || !sfs_g.opt.stats_file[0])
		return;
	int fd = SFS_REAL(open)(sfs_g.opt.stats_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
				0644);
	if (fd >= 0)
		sfs_g.stats_fd = sfs_internal_fd(fd);
	else
		sfs_warn("SPLITFS_STATS_FILE=%s: %s", sfs_g.opt.stats_file, strerror(errno));
}

void sfs_print_stats(const char *reason)
{
	if (!sfs_stats_on)
		return;
	if (sfs_g.stats_fd >= 0) {
		sfs_stats_print(sfs_g.stats_fd, reason);
		return;
	}
	struct stat st;
	if (SFS_REAL(fstat)(2, &st) == 0 && st.st_dev == sfs_g.stderr_dev &&
	    st.st_ino == sfs_g.stderr_ino)
		sfs_stats_print(2, reason);
}
