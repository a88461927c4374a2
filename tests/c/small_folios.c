/* SPDX-License-Identifier: Apache-2.0 */
/* Description: overwrites of a file whose page cache holds 4 KiB folios
 * (one a program wrote a page at a time). A store into a page of such a
 * file not written since the last writeback takes a write fault that
 * costs more than the kernel's pwrite, so the library writes a page's
 * first overwrite with pwrite and stores its later ones (src/fs/ahead.c).
 * Mixed that way, every byte must be the last write's, through the
 * library's reads (its mappings) and the kernel's.
 * The overwriter reads the file, overwrites it in order, fsyncs, then
 * writes pages at random three times each (a page, the page again, a
 * piece of it), reads it all back and fsyncs. Under the library it runs
 * with statistics on: in POSIX mode, on a file found in 4 KiB folios,
 * some overwrites were pwrites, and none of a page's later writes in the
 * same sync period were. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define PAGE 4096L
#define PAGES 4096L /* 16 MiB */
#define SIZE (PAGE * PAGES)
#define RANDOM 1024 /* pages written three times each */
#define PIECE_AT 1000
#define PIECE 100

/* Writes [off, off + n) of stream seed to fd (when fd >= 0) and into the
 * model of the file. */
static void overwrite(int fd, unsigned char *model, long off, long n, unsigned seed)
{
	t_fill(model + off, (size_t)n, seed, off);
	if (fd >= 0)
		T_CHECK(pwrite(fd, model + off, (size_t)n, off) == n, "pwrite %ld at %ld", n, off);
}

/* The random phase: page p of iteration i, the same sequence each call. */
static long random_page(int i)
{
	return (long)(((unsigned long)i * 2654435761ul + 12345ul) % (unsigned long)PAGES);
}

/* The writes after the read pass; fd < 0: the model only. */
static void overwrites(int fd, unsigned char *model)
{
	for (long p = 0; p < PAGES; p++)
		overwrite(fd, model, p * PAGE, PAGE, 2);
	if (fd >= 0)
		T_CHECK(fsync(fd) == 0, "fsync after the sequential pass");
	for (int i = 0; i < RANDOM; i++) {
		long at = random_page(i) * PAGE;
		overwrite(fd, model, at, PAGE, 3);
		overwrite(fd, model, at, PAGE, 4 + (unsigned)i % 7);
		overwrite(fd, model, at + PIECE_AT, PIECE, 11);
	}
}

static unsigned char *initial(void)
{
	unsigned char *model = malloc(SIZE);
	T_REQUIRE(model, "malloc");
	t_fill(model, SIZE, 1, 0);
	return model;
}

static void overwriter(const char *path)
{
	unsigned char *model = initial();
	int fd = open(path, O_RDWR);
	T_REQUIRE(fd >= 0, "open %s", path);
	unsigned char *page = malloc(PAGE);
	T_REQUIRE(page, "malloc");
	for (long p = 0; p < PAGES; p++) /* the library maps the pages as it reads */
		T_CHECK(pread(fd, page, PAGE, p * PAGE) == PAGE &&
				memcmp(page, model + p * PAGE, PAGE) == 0,
			"read pass: page %ld", p);
	overwrites(fd, model);
	unsigned char *got = NULL;
	long size = 0;
	T_CHECK(t_read_fd(fd, &got, &size) == SIZE && size == SIZE,
		"reading back: %ld bytes of %ld", size, SIZE);
	for (long p = 0; got && p < PAGES; p++)
		T_CHECK(memcmp(got + p * PAGE, model + p * PAGE, PAGE) == 0,
			"read back: page %ld differs", p);
	T_CHECK(fsync(fd) == 0, "fsync");
	T_CHECK(close(fd) == 0, "close");
	free(got);
	free(page);
	free(model);
}

/* The kernel's file holds the model. */
static void check_kernel(const char *path)
{
	unsigned char *model = initial();
	overwrites(-1, model);
	unsigned char *got = NULL;
	T_CHECK(t_read_kernel(path, &got) == SIZE, "the kernel's size");
	for (long p = 0; got && p < PAGES; p++)
		T_CHECK(memcmp(got + p * PAGE, model + p * PAGE, PAGE) == 0,
			"the kernel's page %ld differs", p);
	free(got);
	free(model);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: small_folios DIR");
	char *path = strdup(t_path(argv[1], "pages"));
	char *stats = strdup(t_path(argv[1], "stats"));
	if (getenv("SMALL_FOLIOS_ROLE")) {
		overwriter(path);
		return t_result();
	}
	unsigned char *model = initial();
	T_REQUIRE(t_write_kernel(path, model, SIZE, PAGE) == 0, "writing %s in pages", path);
	free(model);
	unlink(stats);
	/* Its own process, started with statistics on: they print at exit,
	 * and the library reads the variables at its start. */
	const char *env[] = {
		"SMALL_FOLIOS_ROLE", "1", "SPLITFS_STATS", "1", "SPLITFS_STATS_FILE", stats, NULL};
	int st = t_run_self(argv[1], env, NULL);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the overwriter failed (status %#x)", st);
	check_kernel(path);
	const char *mode = getenv("SPLITFS_MODE");
	const char *protect = getenv("SPLITFS_PROTECT");
	if (t_under_splitfs() && (!mode || strcmp(mode, "posix") == 0) &&
	    !(protect && strcmp(protect, "0") != 0)) {
		long small = t_stat_event(stats, "ahead_small_folios");
		long pwrites = t_stat_event(stats, "small_folio_pwrites");
		/* Each page's first write of a sync period may be a pwrite: the
		 * sequential pass and the first of each random page's three. */
		long most = PAGES + RANDOM;
		if (small > 0)
			T_CHECK(pwrites > 0 && pwrites <= most,
				"%ld overwrites of pages in 4 KiB folios were pwrites, want 1 to "
				"%ld (statistics in %s)",
				pwrites, most, stats);
		else
			fprintf(stderr, "small_folios: the file was not found in 4 KiB folios "
					"here; only its bytes were checked\n");
	}
	free(stats);
	free(path);
	return t_result();
}
