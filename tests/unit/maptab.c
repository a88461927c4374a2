/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the mapping table (src/map/maptab.c) on a file in a
 * temporary directory: chunks mapped size-aligned and shared with the file,
 * peek never maps, the lazy mode's three counted touches before the mmap,
 * the mapping budget (-ENOMEM, counted), offsets past the radix (-EFBIG), a
 * failing mmap, MAP_SYNC refused once and then never tried, a racing mapper
 * losing its compare-and-swap, and protect_all, drop_all and forget.
 * maptab.o is linked alone: this program defines the globals it reads from
 * the rest of the library (sfs_g, sfs_real, sfs_pkey and the stats), with
 * sfs_real.mmap a counting wrapper of libc's mmap that can fail on demand. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/sys/global.h"
#include "../../src/sys/real.h"
#include "../../src/map/maptab.h"
#include "../../src/map/protect.h"
#include "../../src/util/stats.h"
#include "unit.h"

struct sfs_global sfs_g;
struct sfs_real_table sfs_real;
/* Every real function the module calls is the test's. */
void *sfs_real_lookup(enum sfs_real_row row)
{
	(void)row;
	abort();
}
int sfs_pkey = -1;
bool sfs_stats_on = true;
atomic_uint_fast64_t sfs_event_stats[SFS_EV_COUNT];

/* The budget is read from /proc only while sfs_g.max_vmas is unset; every
 * case sets it. */
ssize_t sfs_kernel_read_text(const char *path, char *buf, size_t size)
{
	(void)path, (void)buf, (void)size;
	abort();
}

#define SHIFT 12
#define CHUNK (1ul << SHIFT)
#define FSIZE (16 * CHUNK)

static int calls, sync_tries, fail_errno;
static struct sfs_maptab *race; /* set: the next mmap lets a rival map first */
static char *rival;

static void *fake_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	calls++;
	if (flags & MAP_SYNC) {
		sync_tries++;
		errno = EOPNOTSUPP; /* not a DAX file */
		return MAP_FAILED;
	}
	if (fail_errno) {
		errno = fail_errno;
		return MAP_FAILED;
	}
	if (race) {
		struct sfs_maptab *t = race;
		int err;
		race = NULL;
		rival = sfs_map_get(t, fd, (uint64_t)off, prot, false, &err);
	}
	return mmap(a, len, prot, flags, fd, off);
}

static int fd = -1;
static unsigned char pattern[FSIZE];

/* A fresh table, counters and file for each case. */
static struct sfs_maptab *setup(void)
{
	static struct sfs_maptab t;
	memset(&t, 0, sizeof(t));
	sfs_g.map_shift = SHIFT;
	sfs_g.max_vmas = 1000;
	sfs_real.mmap = fake_mmap;
	calls = sync_tries = fail_errno = 0;
	race = NULL;
	memset(sfs_event_stats, 0, sizeof(sfs_event_stats));
	for (size_t i = 0; i < FSIZE; i++)
		pattern[i] = (unsigned char)(i * 7 + i / 4096);
	char path[4200];
	const char *dir = u_tmpdir();
	snprintf(path, sizeof(path), "%s/file", dir ? dir : "/nonexistent");
	if (fd >= 0)
		close(fd);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || pwrite(fd, pattern, FSIZE, 0) != (ssize_t)FSIZE)
		return NULL;
	return &t;
}

static bool mapped(const void *p)
{
	unsigned char v;
	return mincore((void *)p, CHUNK, &v) == 0;
}

U_TEST(map, "aligned shared chunks, peek, one mmap each, drop_all")
{
	struct sfs_maptab *t = setup();
	U_REQUIRE(t, "setup");
	int err = 0;
	char *c = sfs_map_get(t, fd, 5000, PROT_READ | PROT_WRITE, false, &err);
	U_REQUIRE(c, "get: %d", err);
	U_CHECK(((uintptr_t)c & (CHUNK - 1)) == 0, "chunk not page aligned");
	U_CHECK(memcmp(c, pattern + CHUNK, CHUNK) == 0, "chunk 1 holds bytes 4096..8191");
	U_CHECK(sfs_map_mapped(t, 4096) == c && sfs_map_mapped(t, 8191) == c, "peek in the chunk");
	U_CHECK(sfs_map_mapped(t, 0) == NULL && sfs_map_mapped(t, 8192) == NULL, "peek elsewhere");
	U_CHECK(sfs_map_get(t, fd, 8000, PROT_READ, false, &err) == c && calls == 1,
		"second get: same chunk, no mmap (%d mmaps)", calls);
	U_CHECK(sfs_map_count() == 1 && sfs_event_stats[SFS_EV_map_chunks] == 1, "count %ld",
		sfs_map_count());
	memcpy(c + 10, "shared", 6);
	char back[6];
	U_CHECK(pread(fd, back, 6, CHUNK + 10) == 6 && memcmp(back, "shared", 6) == 0,
		"a store reaches the file");
	sfs_map_drop_all(t);
	U_CHECK(sfs_map_count() == 0 && sfs_map_mapped(t, 5000) == NULL && !mapped(c),
		"drop_all unmaps");
}

U_TEST(lazy, "three counted touches, the fourth maps; not lazy maps")
{
	struct sfs_maptab *t = setup();
	U_REQUIRE(t, "setup");
	int err;
	for (int i = 1; i <= 3; i++) {
		err = 0;
		char *p = sfs_map_get(t, fd, 100, PROT_READ, true, &err);
		U_CHECK(!p && err == -EAGAIN && calls == 0, "touch %d: %p %d", i, (void *)p, err);
		U_CHECK(sfs_map_mapped(t, 100) == NULL, "touch %d: peek maps nothing", i);
	}
	char *c = sfs_map_get(t, fd, 100, PROT_READ, true, &err);
	U_CHECK(c && calls == 1 && memcmp(c, pattern, CHUNK) == 0, "fourth touch maps");
	err = 0;
	U_CHECK(sfs_map_get(t, fd, CHUNK, PROT_READ, true, &err) == NULL && err == -EAGAIN,
		"another chunk counts on its own");
	U_CHECK(sfs_map_get(t, fd, CHUNK, PROT_READ, false, &err) != NULL && calls == 2,
		"not lazy: mapped after one touch");
	sfs_map_drop_all(t);
}

U_TEST(words, "a word per chunk: none before its leaf, 0 then, kept, gone with drop_all")
{
	struct sfs_maptab *t = setup();
	U_REQUIRE(t, "setup");
	U_CHECK(sfs_map_word(t, 0) == NULL, "no word before the first get");
	int err = 0;
	U_REQUIRE(sfs_map_get(t, fd, 0, PROT_READ, false, &err), "get: %d", err);
	_Atomic uint32_t *w0 = sfs_map_word(t, 100), *w1 = sfs_map_word(t, CHUNK);
	U_REQUIRE(w0 && w1 && w0 != w1, "a word of its own per chunk of the leaf");
	U_CHECK(atomic_load(w0) == 0 && atomic_load(w1) == 0, "words start at 0");
	atomic_store(w0, 7);
	U_CHECK(sfs_map_word(t, CHUNK - 1) == w0 && atomic_load(w0) == 7, "kept");
	U_CHECK(sfs_map_mapped(t, 0) != NULL, "the word is not the chunk's slot");
	uint64_t far = (uint64_t)SFS_MAP_FANOUT << SHIFT; /* the next leaf */
	U_CHECK(sfs_map_word(t, far) == NULL, "no word in a leaf not made");
	sfs_map_drop_all(t);
	U_CHECK(sfs_map_word(t, 0) == NULL, "gone with drop_all");
}

U_TEST(budget, "budget -ENOMEM counted; -EFBIG past the radix")
{
	struct sfs_maptab *t = setup();
	U_REQUIRE(t, "setup");
	sfs_g.max_vmas = 2;
	int err = 0;
	U_CHECK(sfs_map_get(t, fd, 0, PROT_READ, false, &err) &&
			sfs_map_get(t, fd, CHUNK, PROT_READ, false, &err),
		"two chunks: %d", err);
	U_CHECK(sfs_map_get(t, fd, 2 * CHUNK, PROT_READ, false, &err) == NULL && err == -ENOMEM,
		"third: %d", err);
	U_CHECK(calls == 2 && sfs_map_count() == 2, "no mmap past the budget (%d)", calls);
	U_CHECK(sfs_event_stats[SFS_EV_map_budget_full] == 1, "budget_full counted");
	sfs_map_drop_all(t);
	U_CHECK(sfs_map_get(t, fd, 2 * CHUNK, PROT_READ, false, &err) != NULL,
		"room again after drop_all");
	sfs_map_drop_all(t);
	err = 0;
	uint64_t end = (uint64_t)SFS_MAP_FANOUT * SFS_MAP_FANOUT << SHIFT;
	U_CHECK(sfs_map_get(t, fd, end, PROT_READ, false, &err) == NULL && err == -EFBIG,
		"past the radix: %d", err);
	U_CHECK(sfs_map_mapped(t, end) == NULL && calls == 3, "peek past the radix");
}

U_TEST(failures, "mmap error returned; MAP_SYNC refused once")
{
	struct sfs_maptab *t = setup();
	U_REQUIRE(t, "setup");
	int err = 0;
	fail_errno = ENODEV;
	U_CHECK(sfs_map_get(t, fd, 0, PROT_READ, false, &err) == NULL && err == -ENODEV,
		"mmap's error: %d", err);
	U_CHECK(sfs_map_count() == 0 && sfs_map_mapped(t, 0) == NULL, "nothing kept");
	fail_errno = 0;
	U_CHECK(sfs_map_get(t, fd, 0, PROT_READ, false, &err) != NULL, "works again");
	/* MAP_SYNC: tried for writable chunks while t->sync, dropped for good
	 * once refused; read-only chunks never ask. */
	atomic_store(&t->sync, true);
	U_CHECK(sfs_map_get(t, fd, CHUNK, PROT_READ, false, &err) != NULL && sync_tries == 0,
		"read-only: no MAP_SYNC");
	char *w = sfs_map_get(t, fd, 2 * CHUNK, PROT_READ | PROT_WRITE, false, &err);
	U_CHECK(w && sync_tries == 1 && !atomic_load(&t->sync), "refused MAP_SYNC clears sync");
	U_CHECK(sfs_map_get(t, fd, 3 * CHUNK, PROT_READ | PROT_WRITE, false, &err) &&
			sync_tries == 1,
		"not asked again (%d)", sync_tries);
	sfs_map_drop_all(t);
}

/* Another thread maps the chunk while this one is inside mmap. */
U_TEST(race, "a racing mapper wins, the loser unmaps its copy")
{
	struct sfs_maptab *t = setup();
	U_REQUIRE(t, "setup");
	int err;
	race = t;
	rival = NULL;
	char *c = sfs_map_get(t, fd, 0, PROT_READ, false, &err);
	U_CHECK(rival && c == rival, "the loser returns the winner's chunk (%p, %p)", (void *)c,
		(void *)rival);
	U_CHECK(calls == 2 && sfs_map_count() == 1, "the loser's copy is unmapped (%ld)",
		sfs_map_count());
	U_CHECK(sfs_event_stats[SFS_EV_map_chunks] == 1, "one chunk counted");
	sfs_map_drop_all(t);
}

/* The permissions /proc/self/maps shows for address p ("rw-s"). */
static void perms(const void *p, char out[5])
{
	strcpy(out, "none");
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char pr[5];
	while (f && fscanf(f, "%lx-%lx %4s%*[^\n]", &lo, &hi, pr) == 3)
		if ((uintptr_t)p >= lo && (uintptr_t)p < hi)
			strcpy(out, pr);
	if (f)
		fclose(f);
}

U_TEST(protect, "protect_all makes chunks read-only; forget")
{
	struct sfs_maptab *t = setup();
	U_REQUIRE(t, "setup");
	int err;
	char *a = sfs_map_get(t, fd, 0, PROT_READ | PROT_WRITE, false, &err);
	char *b = sfs_map_get(t, fd, 5 * CHUNK, PROT_READ | PROT_WRITE, false, &err);
	U_REQUIRE(a && b, "get: %d", err);
	char pa[5], pb[5];
	perms(a, pa);
	U_CHECK(strcmp(pa, "rw-s") == 0, "mapped %s", pa);
	U_CHECK(sfs_map_protect_all(t, PROT_READ) == 0, "protect_all: %s", strerror(errno));
	perms(a, pa);
	perms(b, pb);
	U_CHECK(strcmp(pa, "r--s") == 0 && strcmp(pb, "r--s") == 0, "read-only: %s %s", pa, pb);
	sfs_map_forget(t);
	U_CHECK(sfs_map_mapped(t, 0) == NULL && sfs_map_mapped(t, 5 * CHUNK) == NULL,
		"forgotten chunks are not found");
	U_CHECK(mapped(a) && mapped(b) && memcmp(b, pattern + 5 * CHUNK, CHUNK) == 0,
		"forget leaves the memory mapped");
	U_CHECK(sfs_map_count() == 2, "and counted (%ld)", sfs_map_count());
	munmap(a, CHUNK);
	munmap(b, CHUNK);
}
