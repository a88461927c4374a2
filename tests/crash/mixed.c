/* SPDX-License-Identifier: Apache-2.0 */
/* Namespace and size changes mixed with data: NNAME files n0..n7 in the
 * directory, changed at random by
 *   replace   write a new generation to a temporary file (fsync or not),
 *             rename it over the name (the atomic-replace idiom)
 *   append    open with O_APPEND, one write, fsync or not, close
 *   rewrite   open with O_TRUNC, one write of a new generation, close
 *   truncate  truncate(2) to a shorter length
 *   unlink
 * The content of a name is a prefix of its generation's stream, so a file
 * tells which generation and length it holds. Every operation is bracketed
 * by "B op ..." and "A op" acknowledgements.
 *
 * Guarantees checked, per name, against the model replayed from the acks:
 *   sync, strict   (any crash) the name is exactly as the last acknowledged
 *                  operation left it, or as the one in flight would leave it
 *                  (a non-strict in-flight write may be partly there)
 *   posix, killed  it exists exactly as the model says (the kernel did the
 *                  namespace change), with its generation, holding at least
 *                  what fsync covered and at most what was written
 *   posix, power   if it exists, it holds a prefix of one of its generations
 *                  (no garbage; zeros only where a truncate zeroed the rest
 *                  of its last block, as the kernel itself leaves them) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"

#define NNAME 8
#define MAXLEN (96u << 10)

struct state {
	bool exists;
	uint32_t gen;
	uint32_t len;	 /* bytes the model says it has */
	uint32_t synced; /* bytes an fsync covered (posix) */
};

static uint32_t stream_of(unsigned name, uint32_t gen)
{
	return mix32(name * 7919u ^ gen * 104729u ^ 0x5eedu);
}

static int write_gen(int fd, unsigned name, uint32_t gen, uint32_t from, uint32_t to)
{
	static unsigned char buf[MAXLEN];
	fill_stream(buf, to - from, stream_of(name, gen), from);
	return write(fd, buf, to - from) == (ssize_t)(to - from) ? 0 : -1;
}

/* The share of each operation, as cumulative percentages: replace below
 * replace, append below append, and so on; unlink takes the rest. */
struct mixed_weights {
	unsigned replace, append, rewrite, truncate;
};

/* mixed: every kind of change. */
static const struct mixed_weights mixed_all = {35, 60, 75, 90};
/* truncate: mostly truncate(2) of files the workload does not have open
 * (in sync and strict modes the library's logged truncate, TRUNCATE
 * record first), with appends to give them length to lose; power cuts
 * then land inside a truncate several times per run. */
static const struct mixed_weights mixed_truncate = {10, 45, 50, 95};

static int run_weighted(const char *dir, uint64_t seed, const struct mixed_weights *w)
{
	struct state st[NNAME] = {{0}};
	uint32_t next_gen = 1;
	char path[4096], tmp[4096];
	for (unsigned op = 0;; op++) {
		unsigned name = rnd(&seed) % NNAME, kind = rnd(&seed) % 100;
		struct state *s = &st[name];
		snprintf(path, sizeof(path), "%s/n%u", dir, name);
		bool sync = rnd(&seed) & 1;
		if (!s->exists || kind < w->replace) { /* replace */
			uint32_t gen = next_gen++, len = 1 + rnd(&seed) % MAXLEN;
			ack("B %u replace %u %u %u %d", op, name, gen, len, sync);
			snprintf(tmp, sizeof(tmp), "%s/t%u", dir, op);
			int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || write_gen(fd, name, gen, 0, len) || (sync && fsync(fd)) ||
			    close(fd) || rename(tmp, path))
				return perror("replace"), 2;
			*s = (struct state){true, gen, len, sync ? len : 0};
		} else if (kind < w->append && s->len < MAXLEN) { /* append */
			uint32_t to = s->len + 1 + rnd(&seed) % (MAXLEN - s->len);
			ack("B %u append %u %u %u %d", op, name, s->gen, to, sync);
			int fd = open(path, O_WRONLY | O_APPEND);
			if (fd < 0 || write_gen(fd, name, s->gen, s->len, to) ||
			    (sync && fsync(fd)) || close(fd))
				return perror("append"), 2;
			s->len = to;
			if (sync)
				s->synced = to;
		} else if (kind < w->rewrite) { /* rewrite */
			uint32_t gen = next_gen++, len = 1 + rnd(&seed) % MAXLEN;
			ack("B %u rewrite %u %u %u 0", op, name, gen, len);
			int fd = open(path, O_WRONLY | O_TRUNC);
			if (fd < 0 || write_gen(fd, name, gen, 0, len) || close(fd))
				return perror("rewrite"), 2;
			*s = (struct state){true, gen, len, 0};
		} else if (kind < w->truncate) { /* truncate */
			uint32_t to = rnd(&seed) % (s->len + 1);
			ack("B %u truncate %u %u %u 0", op, name, s->gen, to);
			if (truncate(path, to) != 0)
				return perror("truncate"), 2;
			s->len = to;
			if (s->synced > to)
				s->synced = to;
		} else { /* unlink */
			ack("B %u unlink %u 0 0 0", op, name);
			if (unlink(path) != 0)
				return perror("unlink"), 2;
			*s = (struct state){0};
		}
		ack("A %u", op);
	}
}

int run_mixed(const char *dir, uint64_t seed, bool truncates)
{
	return run_weighted(dir, seed, truncates ? &mixed_truncate : &mixed_all);
}

/* Applies one acknowledged operation to the model. */
static void apply(struct state *st, const char *what, unsigned name, uint32_t gen, uint32_t len,
		  int sync)
{
	struct state *s = &st[name];
	if (strcmp(what, "replace") == 0 || strcmp(what, "rewrite") == 0) {
		*s = (struct state){true, gen, len, sync ? len : 0};
	} else if (strcmp(what, "append") == 0) {
		s->len = len;
		if (sync)
			s->synced = len;
	} else if (strcmp(what, "truncate") == 0) {
		s->len = len;
		if (s->synced > len)
			s->synced = len;
	} else {
		*s = (struct state){0};
	}
}

/* Whether data[0..size) is the first size bytes of (name, gen). Bytes
 * that differ may be zeros inside [t, t rounded up to 4 KiB) for a length t
 * in zeros[0..nz): a truncate zeroes the rest of its last block before its
 * new size is journaled, so after a power cut a POSIX file may hold those
 * zeros under its old size (plain XFS does). */
static bool prefix_zeros(const unsigned char *data, long size, unsigned name, uint32_t gen,
			 const uint32_t *zeros, unsigned nz)
{
	unsigned char *want = malloc((size_t)size + 1);
	fill_stream(want, (size_t)size, stream_of(name, gen), 0);
	bool ok = true;
	for (long i = 0; ok && i < size; i++) {
		if (data[i] == want[i])
			continue;
		ok = false;
		for (unsigned z = 0; !ok && data[i] == 0 && z < nz; z++)
			ok = i >= (long)zeros[z] && i < (long)((zeros[z] + 4095u) & ~4095u);
	}
	free(want);
	return ok;
}

static bool is_prefix(const unsigned char *data, long size, unsigned name, uint32_t gen)
{
	return prefix_zeros(data, size, name, gen, NULL, 0);
}

/* What a file that is not as expected holds, for the report. */
static const char *describe(const unsigned char *data, long size, unsigned name, uint32_t gen)
{
	static char out[160];
	out[0] = '\0';
	if (size <= 0)
		return out;
	unsigned char *want = malloc((size_t)size);
	fill_stream(want, (size_t)size, stream_of(name, gen), 0);
	long at = 0;
	while (at < size && data[at] == want[at])
		at++;
	free(want);
	long zeros = 0;
	for (long i = at; i < size && data[i] == 0; i++)
		zeros++;
	int g = -1; /* whose stream the first differing 64 bytes are */
	for (uint32_t cand = 1; cand < 100000 && g < 0 && at < size; cand++) {
		unsigned char probe[64];
		long len = size - at < 64 ? size - at : 64;
		fill_stream(probe, (size_t)len, stream_of(name, cand), (uint64_t)at);
		if (memcmp(probe, data + at, (size_t)len) == 0)
			g = (int)cand;
	}
	snprintf(out, sizeof(out), " (gen %u's bytes up to %ld, then %ld zeros%s%d)", gen, at,
		 zeros, g >= 0 ? ", then gen " : ", then unknown bytes", g);
	return out;
}

int check_mixed(const char *dir, char **acks, size_t n, enum crash_mode m, enum crash_kind k)
{
	struct state acked[NNAME] = {{0}}, after[NNAME];
	/* Every generation each name had, every length it was truncated to
	 * (posix, power). */
	uint32_t *gens[NNAME], *truncs[NNAME];
	unsigned ngens[NNAME] = {0}, ntruncs[NNAME] = {0};
	for (unsigned i = 0; i < NNAME; i++) {
		gens[i] = malloc((n + 1) * sizeof(uint32_t));
		truncs[i] = malloc((n + 1) * sizeof(uint32_t));
	}
	bool inflight = false;
	char what[16];
	unsigned op, name, aop;
	uint32_t gen, len;
	int sync;
	unsigned fl_name = 0;
	char fl_what[16] = "";
	for (size_t i = 0; i < n; i++) {
		if (sscanf(acks[i], "B %u %15s %u %u %u %d", &op, what, &name, &gen, &len, &sync) ==
			    6 &&
		    name < NNAME) {
			inflight = true;
			fl_name = name;
			snprintf(fl_what, sizeof(fl_what), "%s", what);
			memcpy(after, acked, sizeof(after));
			apply(after, what, name, gen, len, sync);
			if (strcmp(what, "replace") == 0 || strcmp(what, "rewrite") == 0)
				gens[name][ngens[name]++] = gen;
			if (strcmp(what, "truncate") == 0)
				truncs[name][ntruncs[name]++] = len;
		} else if (sscanf(acks[i], "A %u", &aop) == 1 && inflight) {
			memcpy(acked, after, sizeof(acked));
			inflight = false;
		}
	}
	int checked = 0;
	for (unsigned nm = 0; nm < NNAME; nm++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/n%u", dir, nm);
		unsigned char *data;
		long size = read_file(path, &data);
		bool exists = size >= 0;
		if (!exists && errno != ENOENT) {
			violation("n%u: cannot read: %s", nm, strerror(errno));
			continue;
		}
		checked++;
		const struct state *a = &acked[nm];
		const struct state *b = inflight && fl_name == nm ? &after[nm] : NULL;
		if (m == MODE_POSIX && k == KIND_POWER) {
			bool ok = !exists || size == 0;
			for (unsigned g = 0; exists && !ok && g < ngens[nm]; g++)
				ok = size <= (long)MAXLEN &&
				     prefix_zeros(data, size, nm, gens[nm][g], truncs[nm],
						  ntruncs[nm]);
			if (!ok)
				violation("n%u: %ld bytes, not a prefix of any of its generations "
					  "(zeros or garbage)",
					  nm, size);
			free(data);
			continue;
		}
		/* The states allowed: what the acknowledged history left, or what
		 * the operation in flight leaves (partly, outside strict). */
		bool ok = false;
		for (int which = 0; which < 2 && !ok; which++) {
			const struct state *s = which == 0 ? a : b;
			if (!s)
				continue;
			if (!s->exists) {
				ok = !exists;
				continue;
			}
			if (!exists)
				continue;
			/* Killed: every mode keeps what a write returned for, as
			 * the kernel's page cache does (POSIX mode's staged
			 * appends through recovery). */
			uint32_t lo = s->len, hi = s->len;
			if (b && which == 1 && m != MODE_STRICT) {
				/* A write in flight may be partly there (not in strict). */
				if (strcmp(fl_what, "append") == 0)
					lo = a->len < lo ? a->len : lo;
				else if (strcmp(fl_what, "rewrite") == 0)
					lo = 0;
			}
			if (b && which == 1 && strcmp(fl_what, "rewrite") == 0 && size == 0)
				lo = 0; /* truncated by the open, not yet written */
			ok = size >= lo && size <= hi && is_prefix(data, size, nm, s->gen);
		}
		if (!ok)
			violation(
				"n%u: %s, %ld bytes%s; acknowledged: %s gen %u len %u (fsynced %u)%s%s",
				nm, exists ? "exists" : "absent", size,
				describe(data, size, nm, a->gen), a->exists ? "exists" : "absent",
				a->gen, a->len, a->synced, b ? "; in flight: " : "",
				b ? fl_what : "");
		free(data);
	}
	for (unsigned i = 0; i < NNAME; i++) {
		free(gens[i]);
		free(truncs[i]);
	}
	printf("mixed: %d names checked, %s in flight\n", checked, inflight ? fl_what : "nothing");
	return 0;
}
