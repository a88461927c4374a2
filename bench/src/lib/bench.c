/* SPDX-License-Identifier: Apache-2.0 */
/* Description: what the benchmark programs share (bench.h). */
#define _GNU_SOURCE
#include "bench.h"

#include <stdio.h>
#include <string.h>

int bench_fail(const char *what)
{
	perror(what);
	return 1;
}

int bench_want(const char *list, const char *name)
{
	if (!list)
		return 1;
	char buf[512], key[64];
	snprintf(buf, sizeof(buf), ",%s,", list);
	snprintf(key, sizeof(key), ",%s,", name);
	return strstr(buf, key) != NULL;
}

uint64_t bench_rnd(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717u;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}
