/* SPDX-License-Identifier: Apache-2.0 */
/* util/decname.h: the store names it makes are snprintf's, byte for byte,
 * for edge and random numbers, and cut short (and NUL-terminated) as
 * snprintf cuts them in a buffer too small, with the same length returned;
 * so are the names sfs_name_cat joins (a store's .data name). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "../../src/util/decname.h"
#include "unit.h"

static const uint64_t edges[] = {
	0,	   1, 9, 10, 99, 100, 4294967295u, 4294967296u, UINT64_MAX / 10, UINT64_MAX - 1,
	UINT64_MAX};

static void same(const uint64_t *v, int n, size_t size)
{
	char want[128], got[128];
	int wlen = n == 3 ? snprintf(want, size, "stage.%llu.%llu.%llu", (unsigned long long)v[0],
				     (unsigned long long)v[1], (unsigned long long)v[2]) :
			    snprintf(want, size, "idle.%llu.%llu", (unsigned long long)v[0],
				     (unsigned long long)v[1]);
	memset(got, 'x', sizeof(got));
	size_t glen = sfs_decname(got, size, n == 3 ? "stage." : "idle.", v, n);
	U_CHECK(glen == (size_t)wlen, "length %zu, snprintf's %d", glen, wlen);
	U_CHECK(size == 0 || strcmp(got, want) == 0, "'%s', snprintf's '%s' (size %zu)", got, want,
		size);
	U_CHECK(got[size] == 'x', "a byte past the buffer of %zu written", size);
}

U_TEST(edges, "every pair and triple of edge numbers: snprintf's names")
{
	int ne = (int)(sizeof(edges) / sizeof(edges[0]));
	for (int a = 0; a < ne; a++)
		for (int b = 0; b < ne; b++) {
			same((uint64_t[]){edges[a], edges[b]}, 2, 96);
			same((uint64_t[]){edges[a], edges[b], edges[(a + b) % ne]}, 3, 96);
		}
}

U_TEST(random, "10000 random triples: snprintf's names")
{
	srand(7);
	for (int i = 0; i < 10000; i++) {
		uint64_t v[3];
		for (int k = 0; k < 3; k++)
			v[k] = ((uint64_t)rand() << 33 ^ (uint64_t)rand() << 11 ^
				(uint64_t)rand()) >>
			       (rand() % 64);
		same(v, 3, 96);
	}
}

U_TEST(short_buffer, "every buffer size from 0 to past the name: cut as snprintf cuts")
{
	uint64_t v[] = {1000, 2049, UINT64_MAX};
	for (size_t size = 0; size < 70; size++)
		same(v, 3, size);
}

U_TEST(name_cat, "name + suffix in every buffer size: snprintf's \"%s%s\"")
{
	const char *names[] = {"", "stage.0.2049.131", "idle.1000.18446744073709551615"};
	for (int i = 0; i < 3; i++)
		for (size_t size = 0; size < 48; size++) {
			char want[64], got[64];
			int wlen = snprintf(want, size, "%s%s", names[i], ".data");
			memset(got, 'x', sizeof(got));
			size_t glen = sfs_name_cat(got, size, names[i], ".data");
			U_CHECK(glen == (size_t)wlen, "length %zu, snprintf's %d", glen, wlen);
			U_CHECK(size == 0 || strcmp(got, want) == 0,
				"'%s', snprintf's '%s' (size %zu)", got, want, size);
			U_CHECK(got[size] == 'x', "a byte past the buffer of %zu written", size);
		}
}
