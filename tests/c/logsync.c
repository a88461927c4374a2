/* SPDX-License-Identifier: Apache-2.0 */
/* Description: POSIX mode serves the fdatasync, and the fsync, of a file
 * that only grew a little since its last sync with one write into the
 * operation log (src/fs/logsync.h); any other change since that sync must
 * make the sync the kernel's, since the record covers only the bytes past
 * the file's durable end (and carries a time replay gives the file), and
 * for an fsync so must a metadata call (the kernel's fsync would make it
 * durable). Six children (this program again, statistics on), each
 * writing a log file with pwrite at its end and fdatasync (fsync in fsyncs
 * and chmods):
 *   - appends: ROUNDS records, each synced;
 *   - overwrites: the same, and before each record from CHANGE_FROM on an
 *     overwrite of the file's first bytes;
 *   - truncations: the same, and before each record from CHANGE_FROM on a
 *     truncation of the last byte (the record then starts there);
 *   - fsyncs: as appends, each record fsynced;
 *   - chmods: as fsyncs, and before each record from CHANGE_FROM on an
 *     fchmod of the file (a metadata call);
 *   - times: as appends, and before each record from CHANGE_FROM on the
 *     file's times set (futimens: a record's time would replace them).
 * The appends' and fsyncs' syncs from the 21st on are served by the log;
 * the others' only until CHANGE_FROM. Each file must hold what was written.
 * The counts are asserted in POSIX mode off DAX (the log serves no sync on
 * DAX); the contents in every mode. That a record holds what it must, its
 * time included, is the crash suite's to show (tests/crash: power cuts).
 *   logsync DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define ROUNDS 60
#define CHANGE_FROM 30 /* the round from which the other changes come */
/* Syncs before the log serves them: the lease comes with the 16th write
 * (src/fs/lease.c), then SFS_LOGSYNC_STREAK (4) small syncs in a row. */
#define UNSERVED 20
#define REC 300

enum kind { APPENDS, OVERWRITES, TRUNCATIONS, FSYNCS, CHMODS, TIMES, KINDS };
static const char *const kinds[KINDS] = {"appends", "overwrites", "truncations",
					 "fsyncs",  "chmods",	  "times"};
/* The syncs the log serves, of ROUNDS. */
static const int served[KINDS] = {ROUNDS - UNSERVED,	  CHANGE_FROM - UNSERVED,
				  CHANGE_FROM - UNSERVED, ROUNDS - UNSERVED,
				  CHANGE_FROM - UNSERVED, CHANGE_FROM - UNSERVED};

/* What the file holds after n rounds of kind k (model, *size). */
static void play(enum kind k, int fd, unsigned char *model, long *size)
{
	unsigned char rec[REC];
	*size = 0;
	for (int r = 0; r < ROUNDS; r++) {
		if (r >= CHANGE_FROM && k == OVERWRITES) {
			unsigned char x[8];
			memset(x, 'A' + r % 26, sizeof(x));
			memcpy(model, x, sizeof(x));
			if (fd >= 0)
				T_REQUIRE(pwrite(fd, x, sizeof(x), 0) == (ssize_t)sizeof(x),
					  "overwrite");
		}
		if (r >= CHANGE_FROM && k == TRUNCATIONS) {
			*size -= 1;
			if (fd >= 0)
				T_REQUIRE(ftruncate(fd, *size) == 0, "truncate");
		}
		if (r >= CHANGE_FROM && k == CHMODS && fd >= 0)
			T_REQUIRE(fchmod(fd, r % 2 ? 0640 : 0644) == 0, "fchmod");
		/* The file's time set back to 2023: a record's time must not
		 * replace it at replay. */
		if (r >= CHANGE_FROM && k == TIMES && fd >= 0) {
			struct timespec t[2] = {{.tv_nsec = UTIME_OMIT}, {1700000000 + r, 0}};
			T_REQUIRE(futimens(fd, t) == 0, "futimens");
		}
		for (int i = 0; i < REC; i++)
			rec[i] = (unsigned char)(r * 7 + i);
		memcpy(model + *size, rec, REC);
		if (fd >= 0) {
			T_REQUIRE(pwrite(fd, rec, REC, *size) == REC, "append %d", r);
			if (k == FSYNCS || k == CHMODS)
				T_REQUIRE(fsync(fd) == 0, "fsync %d", r);
			else
				T_REQUIRE(fdatasync(fd) == 0, "fdatasync %d", r);
		}
		*size += REC;
	}
}

static void writer(const char *path, enum kind k)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);
	static unsigned char model[ROUNDS * REC];
	long size;
	play(k, fd, model, &size);
	T_CHECK(close(fd) == 0, "close");
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: logsync DIR");
	const char *role = getenv("LOGSYNC_ROLE");
	if (role) {
		writer(t_path(argv[1], role), (enum kind)(role[0] - '0'));
		return t_result();
	}
	const char *mode = getenv("SPLITFS_MODE");
	bool posix = t_under_splitfs() && (!mode || strcmp(mode, "posix") == 0);
	/* On DAX a synced file's fsync makes no system call already (its
	 * stores are flushed as they are made): the log serves none there. */
	bool counted = posix;
	long logged[KINDS];
	for (int k = 0; k < KINDS; k++) {
		char name[2] = {(char)('0' + k), 0};
		char *path = strdup(t_path(argv[1], name));
		char *stats = strdup(t_path(argv[1], "stats"));
		unlink(stats);
		const char *env[] = {
			"LOGSYNC_ROLE", name, "SPLITFS_STATS", "1", "SPLITFS_STATS_FILE",
			stats,		NULL};
		int st = t_run_self(argv[1], env, NULL);
		T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the writer failed (%#x)",
			kinds[k], st);
		static unsigned char model[ROUNDS * REC];
		long size;
		play((enum kind)k, -1, model, &size);
		unsigned char *got = NULL;
		long n = t_read_kernel(path, &got);
		T_CHECK(n == size && got && memcmp(got, model, (size_t)size) == 0,
			"%s: the file differs from what was written (%ld bytes, want %ld)",
			kinds[k], n, size);
		free(got);
		if (t_on_dax(path))
			counted = false;
		logged[k] = t_stat_event(stats, "log_syncs");
		if (logged[k] < 0) /* never counted */
			logged[k] = 0;
		free(path);
		free(stats);
	}
	if (counted)
		for (int k = 0; k < KINDS; k++)
			T_CHECK(logged[k] == served[k],
				"%s: %ld syncs served by the log, want %d (after a change other "
				"than an append, or before an fsync a metadata call, the "
				"kernel's)",
				kinds[k], logged[k], served[k]);
	return t_result();
}
