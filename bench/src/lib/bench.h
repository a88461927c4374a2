/* SPDX-License-Identifier: Apache-2.0 */
/* What the C benchmark programs of bench/src/ share: the clock (inline,
 * here), failing with perror, the choice of patterns, a fixed random
 * sequence and a comparison for qsort (bench.c, which the Makefile links
 * into each program). */
#ifndef SFS_BENCH_H
#define SFS_BENCH_H

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

#endif
