/* SPDX-License-Identifier: Apache-2.0 */
/* Description: which logs recovery (src/oplog/recover.c) takes, on logs
 * crafted in a temporary directory (logcraft.c) and replayed through libc:
 * only names log.* but not log.free.*; only a regular, private (no group or
 * other bits), single-link, allocated (not sparse) file of at least 8192
 * bytes, owned by the caller (root recovering for all: anyone's), whose
 * flock is free (its process is dead); never through a symlink. A log with
 * no header is retired without replay. A replayed log is renamed
 * log.free.* unless the user keeps 4 free logs already, then removed. A
 * missing directory is nothing to do. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logcraft.h"
#include "unit.h"

static const char *dir;
static struct sfs_recover_env env;
static struct sfs_recovery rep;
static char tpath[LC_PATH];
static uint64_t ino, igen;

static bool start(void)
{
	dir = u_tmpdir();
	if (!dir)
		return false;
	env = lc_env(dir);
	return lc_target(dir, "target", "0000000000", tpath, &ino, &igen);
}

/* A log of a crash writing data at 0 of the target, saved as name. */
static bool make_log(const char *name, const char *data, mode_t mode)
{
	struct lc_log l;
	if (!lc_new(&l, 65536, 1, lc_crash_boot, LC_MNT))
		return false;
	lc_file(&l, 1, 1, tpath, ino, igen);
	lc_write(&l, 1, 2, 0, data);
	int rc = lc_save(&l, dir, name, mode);
	lc_free(&l);
	return rc == 0;
}

/* dir/name; two buffers in turn, so one call may take two paths. */
static char *path(const char *name)
{
	static char p[2][LC_PATH];
	static int turn;
	turn ^= 1;
	snprintf(p[turn], sizeof(p[turn]), "%s/%s", dir, name);
	return p[turn];
}

static int recover(void)
{
	return sfs_recover_dir(&env, dir, &rep);
}

/* The log name was left alone: not replayed, still there. */
#define UNTOUCHED(name, why)                                                                       \
	U_CHECK(recover() == 0 && rep.logs == 0 && lc_exists(dir, name) &&                         \
			strcmp(lc_read(tpath), "0000000000") == 0,                                 \
		"%s: logs %u, \"%s\"", why, rep.logs, lc_read(tpath))

U_TEST(mode, "group/other bits refuse a log; 0600 replays")
{
	U_REQUIRE(start() && make_log("log.1", "AA", 0640), "setup");
	UNTOUCHED("log.1", "mode 0640");
	U_REQUIRE(chmod(path("log.1"), 0604) == 0, "chmod");
	UNTOUCHED("log.1", "mode 0604");
	U_REQUIRE(chmod(path("log.1"), 0600) == 0, "chmod");
	U_CHECK(recover() == 0 && rep.logs == 1 && strcmp(lc_read(tpath), "AA00000000") == 0,
		"mode 0600: replayed (%u)", rep.logs);
}

U_TEST(shape, "under 8192, sparse, two links, symlink, FIFO refused")
{
	U_REQUIRE(start(), "setup");
	struct lc_log l; /* v1 (records from 64), but under 8192 bytes */
	U_REQUIRE(lc_new_v1(&l, 4096, 1), "log");
	lc_file(&l, 1, 1, tpath, ino, igen);
	lc_write(&l, 1, 2, 0, "SS");
	U_REQUIRE(lc_save(&l, dir, "log.small", 0600) == 0, "save");
	lc_free(&l);
	UNTOUCHED("log.small", "4096 bytes");
	unlink(path("log.small"));
	U_REQUIRE(make_log("log.sparse", "PP", 0600) && truncate(path("log.sparse"), 4 << 20) == 0,
		  "sparse");
	UNTOUCHED("log.sparse", "sparse");
	unlink(path("log.sparse"));
	U_REQUIRE(make_log("log.linked", "LL", 0600) && link(path("log.linked"), path("keep")) == 0,
		  "link");
	UNTOUCHED("log.linked", "two links");
	unlink(path("keep"));
	unlink(path("log.linked"));
	U_REQUIRE(make_log("real", "YY", 0600) && symlink(path("real"), path("log.sym")) == 0,
		  "symlink");
	UNTOUCHED("log.sym", "a symlink");
	U_CHECK(strstr(rep.first_error, "log.sym") != NULL, "ELOOP noted: \"%s\"", rep.first_error);
	U_REQUIRE(mkfifo(path("log.fifo"), 0600) == 0, "mkfifo");
	unlink(path("log.sym"));
	UNTOUCHED("log.fifo", "a FIFO");
	U_CHECK(!rep.first_error[0], "FIFO: no error \"%s\"", rep.first_error);
}

U_TEST(names, "log.* only, not log.free.*; a missing directory")
{
	U_REQUIRE(start(), "setup");
	U_REQUIRE(make_log("log.free.1.2", "FF", 0600) && make_log("xlog.1", "XX", 0600) &&
			  make_log("LOG.1", "CC", 0600),
		  "setup");
	UNTOUCHED("log.free.1.2", "log.free.*, xlog.1, LOG.1");
	U_REQUIRE(rename(path("xlog.1"), path("log.1")) == 0, "rename");
	U_CHECK(recover() == 0 && rep.logs == 1 && strcmp(lc_read(tpath), "XX00000000") == 0,
		"log.1 replayed");
	/* Missing directory: nothing to do. */
	U_CHECK(sfs_recover_dir(&env, path("none"), &rep) == 0 && rep.logs == 0,
		"a missing directory");
}

U_TEST(lock, "a log flock'ed by a live process is left alone")
{
	U_REQUIRE(start() && make_log("log.live", "LL", 0600), "setup");
	int fd = open(path("log.live"), O_RDONLY | O_CLOEXEC);
	U_REQUIRE(fd >= 0 && flock(fd, LOCK_EX) == 0, "flock");
	UNTOUCHED("log.live", "locked by a live process");
	close(fd);
	U_CHECK(recover() == 0 && rep.logs == 1 && strcmp(lc_read(tpath), "LL00000000") == 0,
		"replayed once unlocked");
}

U_TEST(no_header, "a log without header: retired, nothing replayed")
{
	U_REQUIRE(start(), "setup");
	struct lc_log l;
	U_REQUIRE(lc_new(&l, 65536, 1, lc_crash_boot, LC_MNT), "log");
	lc_file(&l, 1, 1, tpath, ino, igen);
	lc_write(&l, 1, 2, 0, "HH");
	memset(l.m, 0, SFS_LOG_UNIT); /* its creation never finished */
	U_REQUIRE(lc_save(&l, dir, "log.nohdr", 0600) == 0, "save");
	lc_free(&l);
	U_CHECK(recover() == 0 && rep.logs == 1 && rep.records == 0 &&
			strcmp(lc_read(tpath), "0000000000") == 0,
		"nothing replayed: records %u \"%s\"", rep.records, lc_read(tpath));
	U_CHECK(!lc_exists(dir, "log.nohdr") && lc_count(dir, "log.free.") == 1, "retired");
}

U_TEST(retire, "renamed log.free.* below 4 free logs, else removed")
{
	U_REQUIRE(start(), "setup");
	for (int i = 0; i < 3; i++) {
		char n[32];
		snprintf(n, sizeof(n), "log.free.kept%d", i);
		U_REQUIRE(make_log(n, "KK", 0600), "setup");
	}
	U_REQUIRE(make_log("log.a", "AA", 0600), "setup");
	U_CHECK(recover() == 0 && rep.logs == 1 && lc_count(dir, "log.free.") == 4 &&
			!lc_exists(dir, "log.a"),
		"3 free logs: renamed (%d)", lc_count(dir, "log.free."));
	U_REQUIRE(make_log("log.b", "BB", 0600), "setup");
	U_CHECK(recover() == 0 && rep.logs == 1 && lc_count(dir, "log.free.") == 4 &&
			!lc_exists(dir, "log.b") && strcmp(lc_read(tpath), "BB00000000") == 0,
		"4 free logs: removed (%d)", lc_count(dir, "log.free."));
}

/* Another user's log: root's recovery for all takes it, a user's not. */
U_TEST(other_user, "another user's log: only root's all-users recovery")
{
	if (geteuid() != 0) {
		u_skip("needs root (a log of another user)");
		return;
	}
	U_REQUIRE(start() && make_log("log.u", "UU", 0600), "setup");
	U_REQUIRE(chown(path("log.u"), 4242, 4242) == 0 && chown(tpath, 4242, 4242) == 0, "chown");
	env.all_users = false;
	UNTOUCHED("log.u", "root, not for all users");
	env.euid = 4343;
	UNTOUCHED("log.u", "another user");
	env.euid = 0;
	env.all_users = true;
	U_CHECK(recover() == 0 && rep.logs == 1 && strcmp(lc_read(tpath), "UU00000000") == 0,
		"root for all users: replayed");
}
