/* SPDX-License-Identifier: Apache-2.0 */
/* Description: in sync mode a file's first append is the kernel's durable
 * write (RWF_DSYNC), not a record, while the operation log holds none of
 * the file (src/fs/logged.c, append_direct): a file written once and
 * closed costs no FILE record, no fdatasync and no COMMIT at its close.
 * Three children (this program again, statistics on), each making its
 * files and exiting:
 *   once    files written with one write each and closed: no log record
 *           at all, one direct append per file;
 *   often   a file appended six times, each fdatasynced, then overwritten
 *           inside and fsynced: one direct append, the rest logged;
 *   reopen  a file written once, closed, opened again with O_APPEND and
 *           written once more: the second open's first append is direct
 *           too (the log holds no record of the file after the first).
 * Every file must hold what was written, in every mode.
 *   sync_appends DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

#define ONCE_FILES 5
#define REC 10240
#define OFTEN 6

enum role { ONCE, OFTEN_ROLE, REOPEN, ROLES };
static const char *const roles[ROLES] = {"once", "often", "reopen"};
/* What each role's statistics must say in sync mode off DAX. */
static const long want_direct[ROLES] = {ONCE_FILES, 1, 2};

/* The bytes a role writes into file `file`, record `i`. */
static void fill(unsigned char *b, int role, int file, int i)
{
	t_fill(b, REC, (unsigned)(role * 1000 + file * 10 + i), 0);
}

static void put(int fd, int role, int file, int i)
{
	static unsigned char b[REC];
	fill(b, role, file, i);
	T_REQUIRE(write(fd, b, REC) == REC, "%s: write %d of file %d", roles[role], i, file);
}

static void writer(const char *dir, enum role r)
{
	char name[32];
	if (r == ONCE) {
		for (int f = 0; f < ONCE_FILES; f++) {
			snprintf(name, sizeof(name), "once.%d", f);
			int fd = open(t_path(dir, name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
			T_REQUIRE(fd >= 0, "open %s", name);
			put(fd, r, f, 0);
			T_REQUIRE(close(fd) == 0, "close %s", name);
		}
	} else if (r == OFTEN_ROLE) {
		int fd = open(t_path(dir, "often"), O_RDWR | O_CREAT | O_TRUNC, 0644);
		T_REQUIRE(fd >= 0, "open often");
		for (int i = 0; i < OFTEN; i++) {
			put(fd, r, 0, i);
			T_REQUIRE(fdatasync(fd) == 0, "fdatasync %d", i);
		}
		/* An overwrite of record 0's place with record OFTEN's bytes. */
		static unsigned char b[REC];
		fill(b, r, 0, OFTEN);
		T_REQUIRE(pwrite(fd, b, REC, 0) == REC && fsync(fd) == 0, "overwrite and fsync");
		T_REQUIRE(close(fd) == 0, "close often");
	} else {
		for (int i = 0; i < 2; i++) {
			int fd = open(t_path(dir, "reopen"),
				      O_WRONLY | O_CREAT | (i ? O_APPEND : O_TRUNC), 0644);
			T_REQUIRE(fd >= 0, "open reopen %d", i);
			put(fd, r, 0, i);
			T_REQUIRE(close(fd) == 0, "close reopen %d", i);
		}
	}
}

/* Whether path holds records first..first+n-1 of (role, file), record
 * `at0` (if >= 0) in place of the first. */
static bool holds(const char *path, int role, int file, int n, int at0)
{
	unsigned char *got = NULL;
	long len = t_read_kernel(path, &got);
	bool ok = len == (long)n * REC;
	static unsigned char b[REC];
	for (int i = 0; ok && i < n; i++) {
		fill(b, role, file, i == 0 && at0 >= 0 ? at0 : i);
		ok = memcmp(got + (size_t)i * REC, b, REC) == 0;
	}
	free(got);
	return ok;
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: sync_appends DIR");
	const char *role = getenv("SYNC_APPENDS_ROLE");
	if (role) {
		writer(argv[1], (enum role)(role[0] - '0'));
		return t_result();
	}
	const char *mode = getenv("SPLITFS_MODE");
	bool counted = t_under_splitfs() && mode && strcmp(mode, "sync") == 0;
	for (int r = 0; r < ROLES; r++) {
		char name[2] = {(char)('0' + r), 0};
		char *stats = strdup(t_path(argv[1], "stats"));
		int st = t_run_self_stats(argv[1], "SYNC_APPENDS_ROLE", name, stats);
		T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the writer failed (%#x)",
			roles[r], st);
		char fname[32];
		if (r == ONCE) {
			for (int f = 0; f < ONCE_FILES; f++) {
				snprintf(fname, sizeof(fname), "once.%d", f);
				T_CHECK(holds(t_path(argv[1], fname), r, f, 1, -1),
					"%s differs from what was written", fname);
			}
		} else if (r == OFTEN_ROLE) {
			T_CHECK(holds(t_path(argv[1], "often"), r, 0, OFTEN, OFTEN),
				"often differs from what was written");
		} else {
			T_CHECK(holds(t_path(argv[1], "reopen"), r, 0, 2, -1),
				"reopen differs from what was written");
		}
		if (t_on_dax(t_path(argv[1], r == ONCE ? "once.0" : roles[r])))
			counted = false; /* a record there is stores, no call */
		if (counted) {
			long direct = t_stat_event(stats, "dsync_appends");
			long records = t_stat_event(stats, "log_records");
			T_CHECK(direct == want_direct[r],
				"%s: %ld appends made as the kernel's durable writes, want %ld",
				roles[r], direct, want_direct[r]);
			if (r == OFTEN_ROLE)
				T_CHECK(records >= OFTEN - 1,
					"often: %ld log records, want %d or more", records,
					OFTEN - 1);
			else
				T_CHECK(records <= 0, "%s: %ld log records, want none", roles[r],
					records);
		}
		free(stats);
	}
	return t_result();
}
