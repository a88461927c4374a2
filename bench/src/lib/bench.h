/* SPDX-License-Identifier: Apache-2.0 */
/* What the C benchmark programs of bench/src/ share: the clock (inline,
 * here), failing with perror, the choice of patterns, a fixed random
 * sequence, a comparison for qsort, and what a result line carries besides
 * its time so that bench/report.py can say what bounds it: the memcpy floor
 * of the same pattern, page faults and calls per op (bench.c, which the
 * Makefile links into each program). */
#ifndef SFS_BENCH_H
#define SFS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns; inline, so that a timed interval costs what it
 * did when each program had its own copy. */
static inline uint64_t bench_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The same as a double, for programs that time in doubles. */
static inline double bench_now(void)
{
	return (double)bench_ns();
}

/* perror(what); 1, for main to return. */
int bench_fail(const char *what);

/* Whether name is in list, "a,b,c" (NULL: every name is). */
int bench_want(const char *list, const char *name);

/* xorshift64*: the next number of the sequence *state (never 0) stands
 * for; the same sequence in every configuration. */
uint64_t bench_rnd(uint64_t *state);

/* qsort's comparison of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);

/* A new file at path (mode 0600, truncated if it was there) of len zero
 * bytes, written and fsync'd, so that later writes into it allocate
 * nothing: its descriptor, or -1 with errno. */
int bench_zero_file(const char *path, uint64_t len);

/* Minor page faults of this process so far (getrusage). */
long bench_minflt(void);

/* The memcpy floor of an IO pattern, ns per op: nops copies of op bytes
 * between buf and mem (an anonymous region as large as the file, touched
 * beforehand), at block i of mem or, with idx, at block idx[i]; into mem
 * (`writes`: overwrites, and appends at increasing i) or out of it (reads).
 * The same offsets in the same order as the file's pattern, no system
 * call and no fault: what the operation cannot avoid. */
double bench_floor(char *mem, char *buf, size_t op, const long *idx, long nops, bool writes);

/* What a result needs besides its time to say what bounds it (bench/README.md,
 * "Overhead and bounds"). A negative number or NULL: not measured, left out. */
struct bench_why {
	double floor_ns;      /* the memcpy floor of the same op or pattern, ns/op */
	const char *floor_of; /* what that floor is, in a few words */
	double faults;	      /* minor page faults per op in the timed loop */
	double fsyncs;	      /* fsync calls per op the program made */
	const char *call;     /* the data call each op makes: its row in the library's stats */
};

/* Prints one result line: {"metric","value","unit","better":"lower"} and, when
 * w is not NULL, its fields floor_ns, floor_of, faults, fsyncs, call. */
void bench_result(const char *metric, double value, const char *unit, const struct bench_why *w);

#endif
