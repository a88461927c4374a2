/* SPDX-License-Identifier: Apache-2.0 */
/* Self-describing records for the concurrency tests: 64 bytes, writer id,
 * sequence number, filler derived from both and a checksum, so a checker
 * can tell a whole record from a torn or misplaced one. */
#ifndef SFS_TEST_RECORDS_H
#define SFS_TEST_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct rec {
	uint32_t magic;
	uint32_t writer;
	uint64_t seq;
	uint8_t fill[44];
	uint32_t sum;
};
_Static_assert(sizeof(struct rec) == 64, "record size");

#define REC_MAGIC 0x52454331u

static inline uint32_t rec_sum(const struct rec *r)
{
	const uint8_t *p = (const uint8_t *)r;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < offsetof(struct rec, sum); i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static inline void rec_make(struct rec *r, uint32_t writer, uint64_t seq)
{
	r->magic = REC_MAGIC;
	r->writer = writer;
	r->seq = seq;
	for (int i = 0; i < 44; i++)
		r->fill[i] = (uint8_t)(writer * 31 + seq * 7 + (uint64_t)i);
	r->sum = rec_sum(r);
}

static inline bool rec_ok(const struct rec *r)
{
	return r->magic == REC_MAGIC && r->sum == rec_sum(r);
}

/* A file of two writers' records (writers 0 and 1, records 0..nrec-1 of
 * each), size bytes at data: *bad counts the records that are torn, of
 * another writer or sequence, or out of their writer's order; *missing,
 * the 2 * nrec records not there exactly once. */
static inline void rec_count_two(const unsigned char *data, long size, uint64_t nrec, long *bad,
				 long *missing)
{
	unsigned char *seen = calloc(2 * nrec, 1);
	uint64_t next[2] = {0, 0};
	*bad = 0;
	*missing = 0;
	for (long off = 0; off + (long)sizeof(struct rec) <= size; off += sizeof(struct rec)) {
		struct rec r;
		memcpy(&r, data + off, sizeof(r));
		if (!rec_ok(&r) || r.writer > 1 || r.seq >= nrec) {
			(*bad)++;
			continue;
		}
		if (r.seq != next[r.writer]) /* each writer's records in its own order */
			(*bad)++;
		next[r.writer] = r.seq + 1;
		if (seen && seen[r.writer * nrec + r.seq] < 255)
			seen[r.writer * nrec + r.seq]++;
	}
	for (uint64_t i = 0; i < 2 * nrec; i++)
		*missing += !seen || seen[i] != 1;
	free(seen);
}

#endif
