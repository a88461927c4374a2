/* SPDX-License-Identifier: Apache-2.0 */
/* util/ntcopy.c: the non-temporal copy writes exactly the bytes memcpy
 * would, whatever the alignment of either end and the length (partial
 * lines at the head and the tail, lengths below one line, whole pages),
 * and nothing before or after the destination range. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../src/util/ntcopy.h"
#include "unit.h"

#define AREA 8192
#define GUARD 128

/* Fills b with bytes that differ at every offset and between seeds. */
static void fill(unsigned char *b, size_t n, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		b[i] = (unsigned char)(x >> 16);
	}
}

/* Copies n bytes from src + soff to dst + doff both ways and compares the
 * whole destination areas, guards included. Returns whether they match. */
static bool same_as_memcpy(size_t doff, size_t soff, size_t n, unsigned seed)
{
	static unsigned char src[AREA + GUARD] __attribute__((aligned(64)));
	static unsigned char got[AREA + 2 * GUARD] __attribute__((aligned(64)));
	static unsigned char want[AREA + 2 * GUARD] __attribute__((aligned(64)));
	fill(src, sizeof(src), seed);
	fill(got, sizeof(got), seed + 1);
	memcpy(want, got, sizeof(want));
	void *r = sfs_copy_nt(got + GUARD + doff, src + soff, n);
	memcpy(want + GUARD + doff, src + soff, n);
	return r == got + GUARD + doff && memcmp(got, want, sizeof(got)) == 0;
}

U_TEST(small, "every length 0-200 at every destination alignment within a line")
{
	int bad = 0;
	for (size_t doff = 0; doff < 64; doff++)
		for (size_t n = 0; n <= 200; n++)
			bad += !same_as_memcpy(doff, (doff * 7 + n) % 64, n, (unsigned)(doff + n));
	U_CHECK(bad == 0, "%d of %d copies differ from memcpy", bad, 64 * 201);
}

U_TEST(pages, "whole and ragged pages: 4096 +- a few bytes, aligned or not")
{
	static const size_t lens[] = {4096, 4095, 4097, 4096 + 63, 4096 - 63, 8000, 64, 128};
	int bad = 0, n = 0;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (size_t doff = 0; doff < 64; doff += 3)
			for (size_t soff = 0; soff < 64; soff += 13, n++)
				bad += !same_as_memcpy(doff, soff, lens[i],
						       (unsigned)(i * 977 + doff));
	U_CHECK(bad == 0, "%d of %d copies differ from memcpy", bad, n);
}
