/* SPDX-License-Identifier: Apache-2.0 */
/* Description: recovery's replay rules (src/oplog/recover.c), on logs
 * crafted in a temporary directory and replayed by sfs_recover_dir through
 * libc (logcraft.c): after a crash (another boot, or another mount) every
 * valid record of the log's generation goes back in seq order, not log
 * order, WRITE as pwrite (WRITE_TIMED then the file's time back) and
 * TRUNCATE as ftruncate, skipping each file's
 * records up to its last COMMIT; the log then gets the next generation and
 * this boot's ids and is renamed log.free.*, so a second recovery replays
 * nothing. Not replayed: a record with a bad CRC (counted), one of an older
 * generation, of an unbound file id or running past the log's end (not
 * counted), a file bound with another inode, generation or device, by a
 * relative path or through a symlink, or gone (counted); on the same boot
 * and mount, every record but the strict writes in flight whose file has
 * not changed since they began; as root, a file not owned by the log's
 * owner. A v1 log (no ident) is replayed whole. A log set's lanes
 * (lane.<main>.<k>) are merged with its main log by seq, their records of
 * an older generation or another set's nonce not replayed, and retired
 * with it; a set with a lane still locked is left alone. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include "logcraft.h"
#include "unit.h"

static const char *dir;
static struct sfs_recover_env env;
static struct sfs_recovery rep;
static char tpath[LC_PATH], opath[LC_PATH];
static uint64_t ino, igen, oino, oigen;

static bool start(const char *content)
{
	dir = u_tmpdir();
	if (!dir)
		return false;
	env = lc_env(dir);
	return lc_target(dir, "target", content, tpath, &ino, &igen) &&
	       lc_target(dir, "other", "bbbbbbbbbb", opath, &oino, &oigen);
}

/* Saves l as dir/name, frees it, runs recovery; its return code. */
static int recover(struct lc_log *l, const char *name)
{
	int rc = l ? lc_save(l, dir, name, 0600) : 0;
	if (l)
		lc_free(l);
	if (rc != 0)
		return rc;
	return sfs_recover_dir(&env, dir, &rep);
}

/* A log of generation gen written before the crash (another boot), with
 * the target bound as file 1 (seq 1). */
static bool crash_log(struct lc_log *l, uint64_t gen)
{
	if (!lc_new(l, 65536, gen, lc_crash_boot, LC_MNT))
		return false;
	lc_file(l, 1, 1, tpath, ino, igen);
	return true;
}

static size_t trunc_rec(struct lc_log *l, uint32_t id, uint64_t seq, uint64_t size)
{
	return lc_add(
		l,
		(struct sfs_log_entry){.op = SFS_LOG_TRUNCATE, .file = id, .seq = seq, .off = size},
		NULL);
}

U_TEST(crash, "seq order, TRUNCATE, next generation, log.free.*")
{
	U_REQUIRE(start("0123456789"), "setup");
	struct lc_log l;
	U_REQUIRE(crash_log(&l, 5), "log");
	lc_write(&l, 1, 4, 0, "ZZ"); /* after the others by seq */
	lc_write(&l, 1, 2, 0, "YYYY");
	trunc_rec(&l, 1, 3, 6);
	lc_write(&l, 1, 5, 14, "E");
	U_REQUIRE(recover(&l, "log.1234.5678") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "ZZYY45........E") == 0, "content \"%s\"", lc_read(tpath));
	U_CHECK(rep.logs == 1 && rep.records == 4 && rep.files == 1 && rep.bytes == 7 &&
			rep.skipped == 0 && !rep.first_error[0],
		"report: logs %u records %u files %u bytes %llu skipped %u \"%s\"", rep.logs,
		rep.records, rep.files, (unsigned long long)rep.bytes, rep.skipped,
		rep.first_error);
	char freed[64], p[LC_PATH];
	snprintf(freed, sizeof(freed), "log.free.r%d.1234.5678", (int)getpid());
	U_CHECK(!lc_exists(dir, "log.1234.5678") && lc_exists(dir, freed), "renamed %s", freed);
	/* The header now: next generation, this boot and mount, valid. */
	struct {
		struct sfs_log_entry e;
		struct sfs_log_ident id;
	} h;
	snprintf(p, sizeof(p), "%s/%s", dir, freed);
	FILE *f = fopen(p, "r");
	U_REQUIRE(f && fread(&h, sizeof(h), 1, f) == 1, "read %s", p);
	fclose(f);
	U_CHECK(h.e.op == SFS_LOG_HEADER && h.e.gen == 6 && h.e.off == SFS_LOG_MAGIC &&
			h.e.arg == 65536 && h.e.payload == sizeof(h.id) &&
			h.e.crc == sfs_log_crc(&h.e, &h.id),
		"new header: gen %llu", (unsigned long long)h.e.gen);
	U_CHECK(memcmp(h.id.boot_id, lc_boot, 16) == 0 && h.id.mnt_id == LC_MNT, "new ident");
	U_REQUIRE(recover(NULL, NULL) == 0, "recover again");
	U_CHECK(rep.logs == 0 && rep.records == 0 && strcmp(lc_read(tpath), "ZZYY45........E") == 0,
		"a second recovery replays nothing (%u logs)", rep.logs);
}

/* A WRITE_TIMED record of data at off, the time {sec, nsec} before it. */
static void timed_rec(struct lc_log *l, uint64_t seq, uint64_t off, const char *data, int64_t sec,
		      int64_t nsec)
{
	char payload[256];
	struct sfs_log_mtime t = {sec, nsec};
	size_t n = strlen(data);
	memcpy(payload, &t, sizeof(t));
	memcpy(payload + sizeof(t), data, n);
	lc_add(l,
	       (struct sfs_log_entry){.op = SFS_LOG_WRITE_TIMED,
				      .payload = (uint32_t)(sizeof(t) + n),
				      .file = 1,
				      .seq = seq,
				      .off = off,
				      .arg = off + n},
	       payload);
}

static int64_t mtime_ns(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec :
				      -1;
}

U_TEST(timed, "WRITE_TIMED, TRUNCATE: the file's time from its last record; malformed not applied")
{
	U_REQUIRE(start("0123456789"), "setup");
	struct lc_log l;
	U_REQUIRE(crash_log(&l, 4), "log");
	timed_rec(&l, 3, 8, "QQ", 1000000000, 7); /* after the other by seq */
	timed_rec(&l, 2, 10, "TAIL", 999999999, 5);
	U_REQUIRE(recover(&l, "log.1") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "01234567QQTAIL") == 0, "content \"%s\"", lc_read(tpath));
	U_CHECK(mtime_ns(tpath) == 1000000000LL * 1000000000 + 7,
		"mtime %lld: the last record's, not the replay's", (long long)mtime_ns(tpath));
	U_CHECK(rep.records == 2 && rep.bytes == 6 && !rep.first_error[0],
		"records %u bytes %llu \"%s\"", rep.records, (unsigned long long)rep.bytes,
		rep.first_error);
	/* The time of the file's last record only: a TRUNCATE's (arg, ns);
	 * none after an older version's WRITE (the replay's then). */
	U_REQUIRE(crash_log(&l, 2), "log");
	timed_rec(&l, 2, 0, "AB", 5, 0);
	lc_add(&l,
	       (struct sfs_log_entry){
		       .op = SFS_LOG_TRUNCATE, .file = 1, .seq = 3, .off = 12, .arg = 77000000009},
	       NULL);
	U_REQUIRE(recover(&l, "log.3") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "AB234567QQTA") == 0 && mtime_ns(tpath) == 77000000009,
		"truncated last: \"%s\", mtime %lld", lc_read(tpath), (long long)mtime_ns(tpath));
	U_REQUIRE(crash_log(&l, 3), "log");
	timed_rec(&l, 2, 0, "CD", 5, 0);
	lc_write(&l, 1, 3, 2, "E");
	int64_t before = lc_now_ns();
	U_REQUIRE(recover(&l, "log.4") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "CDE34567QQTA") == 0 && mtime_ns(tpath) >= before - 20000000,
		"an untimed WRITE last: \"%s\", mtime %lld (recovery at %lld)", lc_read(tpath),
		(long long)mtime_ns(tpath), (long long)before);
	/* A payload shorter than its time: an error, nothing written. */
	U_REQUIRE(crash_log(&l, 1), "log");
	lc_add(&l,
	       (struct sfs_log_entry){
		       .op = SFS_LOG_WRITE_TIMED, .payload = 4, .file = 1, .seq = 2, .off = 0},
	       "XXXX");
	U_REQUIRE(recover(&l, "log.2") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "CDE34567QQTA") == 0 && rep.records == 0 &&
			rep.first_error[0],
		"malformed: \"%s\", records %u", lc_read(tpath), rep.records);
}

U_TEST(commit, "records up to a file's last COMMIT skipped")
{
	U_REQUIRE(start("aaaaaaaaaa"), "setup");
	struct lc_log l;
	U_REQUIRE(crash_log(&l, 3), "log");
	lc_file(&l, 2, 2, opath, oino, oigen);
	lc_write(&l, 1, 3, 0, "XX");
	lc_write(&l, 1, 5, 5, "YY");
	lc_write(&l, 2, 6, 0, "QQ");
	lc_add(&l, (struct sfs_log_entry){.op = SFS_LOG_COMMIT, .file = 1, .seq = 4}, NULL);
	U_REQUIRE(recover(&l, "log.1") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "aaaaaYYaaa") == 0, "target \"%s\"", lc_read(tpath));
	U_CHECK(strcmp(lc_read(opath), "QQbbbbbbbb") == 0, "other \"%s\"", lc_read(opath));
	U_CHECK(rep.records == 2 && rep.files == 2 && rep.skipped == 0, "records %u files %u",
		rep.records, rep.files);
}

U_TEST(corrupt, "bad CRC counted; old gen, unbound, torn tail not")
{
	U_REQUIRE(start("0000000000"), "setup");
	struct lc_log l;
	U_REQUIRE(crash_log(&l, 9), "log");
	char big[101];
	memset(big, 'B', 100);
	big[100] = '\0';
	size_t bad = lc_write(&l, 1, 2, 0, big);
	l.m[bad + SFS_LOG_UNIT + 50] ^= 1; /* torn: its CRC fails */
	lc_write(&l, 1, 3, 2, "GG");
	lc_add(&l,
	       (struct sfs_log_entry){.op = SFS_LOG_WRITE,
				      .payload = 2,
				      .file = 1,
				      .gen = 8,
				      .seq = 4,
				      .off = 4,
				      .arg = 6},
	       "OO");		     /* the previous generation's */
	lc_write(&l, 7, 5, 6, "UU"); /* file 7 was never bound */
	char pay[64];
	memset(pay, 'T', sizeof(pay));
	struct sfs_log_entry t = {.op = SFS_LOG_WRITE,
				  .version = 1,
				  .payload = 64,
				  .file = 1,
				  .gen = 9,
				  .seq = 6,
				  .off = 8,
				  .arg = 72};
	t.crc = sfs_log_crc(&t, pay);
	memcpy(l.m + l.len - SFS_LOG_UNIT, &t, sizeof(t)); /* its payload cut off by the end */
	U_REQUIRE(recover(&l, "log.2") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "00GG000000") == 0, "content \"%s\"", lc_read(tpath));
	U_CHECK(rep.records == 1 && rep.skipped == 1, "records %u skipped %u (want 1, 1)",
		rep.records, rep.skipped);
}

U_TEST(binding, "inode, generation, path, symlink, device checked")
{
	U_REQUIRE(start("0000000000"), "setup");
	char link[LC_PATH], gone[LC_PATH];
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(gone, sizeof(gone), "%s/gone", dir);
	U_REQUIRE(symlink(tpath, link) == 0, "symlink");
	struct lc_log l;
	U_REQUIRE(lc_new(&l, 65536, 1, lc_crash_boot, LC_MNT), "log");
	lc_file(&l, 1, 1, tpath, ino + 1, igen); /* another inode */
	lc_file(&l, 2, 2, tpath, ino, igen + 1); /* another generation */
	lc_file(&l, 3, 3, "target", ino, igen);	 /* relative */
	lc_file(&l, 4, 4, link, ino, igen);	 /* through a symlink */
	lc_file(&l, 5, 5, gone, ino, igen);	 /* no such file */
	lc_file(&l, 9, 6, opath, oino, oigen);	 /* the control */
	for (uint32_t id = 1; id <= 5; id++)
		lc_write(&l, id, 10 + id, 0, "XX");
	lc_write(&l, 9, 20, 0, "99");
	/* From the directory, so that "target" would resolve if taken. */
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	U_REQUIRE(cwd >= 0 && chdir(dir) == 0, "chdir");
	int rc = recover(&l, "log.3");
	U_REQUIRE(fchdir(cwd) == 0, "fchdir");
	close(cwd);
	U_REQUIRE(rc == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "0000000000") == 0, "target \"%s\"", lc_read(tpath));
	U_CHECK(strcmp(lc_read(opath), "99bbbbbbbb") == 0, "control \"%s\"", lc_read(opath));
	U_CHECK(rep.records == 1 && rep.skipped == 5 && rep.files == 1,
		"records %u skipped %u files %u", rep.records, rep.skipped, rep.files);
	/* The right file, but recovery manages another file system. */
	env.root_dev ^= 1;
	U_REQUIRE(crash_log(&l, 1), "log");
	lc_write(&l, 1, 2, 0, "XX");
	U_REQUIRE(recover(&l, "log.4") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "0000000000") == 0 && rep.skipped == 1,
		"another device: \"%s\", skipped %u", lc_read(tpath), rep.skipped);
}

/* Same boot and mount: only strict writes in flight, if still fresh. */
U_TEST(same_mount, "only fresh in-flight strict writes; remount: all")
{
	U_REQUIRE(start("0000000000"), "setup");
	struct lc_log l;
	U_REQUIRE(lc_new(&l, 65536, 4, lc_boot, LC_MNT), "log");
	int64_t now = lc_now_ns();
	lc_file(&l, 1, 1, tpath, ino, igen);
	lc_file(&l, 2, 2, opath, oino, oigen + 1); /* no longer there */
	lc_write(&l, 1, 3, 0, "AA");		   /* returned: in the page cache */
	lc_write(&l, 1, 4, 2, "BB");
	lc_inflight(&l, 0, SFS_INFLIGHT_APPLYING, 4, now);
	lc_write(&l, 1, 5, 4, "CC");
	lc_inflight(&l, 1, SFS_INFLIGHT_CLAIMED, 5, now);
	lc_write(&l, 1, 6, 6, "DD");
	lc_inflight(&l, 2, SFS_INFLIGHT_APPLYING, 6,
		    now - 10ll * 1000000000); /* file changed since */
	lc_write(&l, 1, 7, 8, "EE");
	lc_inflight(&l, 3, SFS_INFLIGHT_APPLYING, 7, now);
	((struct sfs_log_inflight *)(l.m + SFS_LOG_INFLIGHT_OFF))[3].gen = 3; /* older generation */
	lc_write(&l, 2, 8, 0, "FF");
	lc_inflight(&l, 127, SFS_INFLIGHT_APPLYING, 8, now);
	U_REQUIRE(recover(&l, "log.5") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "00BB000000") == 0, "content \"%s\"", lc_read(tpath));
	U_CHECK(rep.logs == 1 && rep.records == 1 && rep.skipped == 0, "records %u skipped %u",
		rep.records, rep.skipped);
	/* Same boot, the file system mounted again: a crash, all goes back. */
	U_REQUIRE(start("0000000000"), "setup");
	U_REQUIRE(lc_new(&l, 65536, 4, lc_boot, LC_MNT + 1), "log");
	lc_file(&l, 1, 1, tpath, ino, igen);
	lc_write(&l, 1, 3, 0, "AA");
	lc_write(&l, 1, 4, 2, "BB");
	U_REQUIRE(recover(&l, "log.6") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "AABB000000") == 0 && rep.records == 2, "remounted: \"%s\"",
		lc_read(tpath));
}

U_TEST(v1, "a v1 log replayed whole, to its last unit")
{
	U_REQUIRE(start("0000000000"), "setup");
	struct lc_log l;
	U_REQUIRE(lc_new_v1(&l, 65536, 2), "log");
	lc_file(&l, 1, 1, tpath, ino, igen);
	lc_write(&l, 1, 2, 3, "V1");
	l.at = l.len - SFS_LOG_UNIT; /* the last unit is read too */
	trunc_rec(&l, 1, 3, 8);
	U_REQUIRE(recover(&l, "log.7") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "000V1000") == 0 && rep.records == 2, "content \"%s\"",
		lc_read(tpath));
}

/* Root's recovery writes a user's log only into that user's files. */
U_TEST(owner, "root replays a user's log only into that user's files")
{
	if (geteuid() != 0) {
		u_skip("needs root (chown of the log and its files)");
		return;
	}
	U_REQUIRE(start("0000000000"), "setup");
	env.all_users = true;
	char p[LC_PATH];
	struct lc_log l;
	U_REQUIRE(crash_log(&l, 1), "log");
	lc_file(&l, 2, 2, opath, oino, oigen);
	lc_write(&l, 1, 3, 0, "XX");
	lc_write(&l, 2, 4, 0, "YY");
	U_REQUIRE(lc_save(&l, dir, "log.8", 0600) == 0, "save");
	lc_free(&l);
	snprintf(p, sizeof(p), "%s/log.8", dir);
	U_REQUIRE(chown(p, 4242, 4242) == 0 && chown(tpath, 4343, 4343) == 0 &&
			  chown(opath, 4242, 4242) == 0,
		  "chown");
	U_REQUIRE(recover(NULL, NULL) == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "0000000000") == 0, "another user's file written");
	U_CHECK(strcmp(lc_read(opath), "YYbbbbbbbb") == 0, "the log owner's file not written");
	U_CHECK(rep.records == 1 && rep.skipped == 1, "records %u skipped %u", rep.records,
		rep.skipped);
	/* A root's log may write anyone's file. */
	U_REQUIRE(crash_log(&l, 1), "log");
	lc_write(&l, 1, 3, 0, "RR");
	U_REQUIRE(recover(&l, "log.9") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "RR00000000") == 0, "root's log: \"%s\"", lc_read(tpath));
}

/* A lane of the set with nonce set of the crash log named main_name. */
static bool save_lane(struct lc_log *l, const char *main_name, unsigned k)
{
	char name[128];
	snprintf(name, sizeof(name), "lane.%s.%u", main_name + 4, k);
	int rc = lc_save(l, dir, name, 0600);
	lc_free(l);
	return rc == 0;
}

#define SET 0x5e75e75e75e75e7ull

U_TEST(lanes, "a set's lanes merged by seq; stale and foreign records not")
{
	U_REQUIRE(start("0123456789"), "setup");
	struct lc_log m, a, b, c;
	U_REQUIRE(crash_log(&m, 5), "main");
	lc_set(&m, lc_crash_boot, LC_MNT, SET, 0);
	lc_file(&m, 1, 1, tpath, ino, igen);
	lc_write(&m, 1, 2, 0, "AAAA");
	U_REQUIRE(lc_new(&a, 65536, 5, lc_crash_boot, LC_MNT), "lane 1");
	lc_set(&a, lc_crash_boot, LC_MNT, SET, 1);
	lc_write(&a, 1, 3, 0, "BB"); /* after the main log's AAAA by seq */
	lc_add(&a,
	       (struct sfs_log_entry){.op = SFS_LOG_WRITE,
				      .payload = 2,
				      .file = 1,
				      .seq = 6,
				      .off = 8,
				      .arg = 10,
				      .gen = 4},
	       "GG");
	lc_add(&a,
	       (struct sfs_log_entry){.op = SFS_LOG_WRITE,
				      .payload = 2,
				      .file = 1,
				      .seq = 7,
				      .off = 8,
				      .arg = 10,
				      .set = SET + 1},
	       "SS");
	U_REQUIRE(lc_new(&b, 65536, 5, lc_crash_boot, LC_MNT), "lane 2");
	lc_set(&b, lc_crash_boot, LC_MNT, SET, 2);
	lc_write(&b, 1, 4, 3, "C");
	/* Lane 3 is another set's (taken, its header never rewritten). */
	U_REQUIRE(lc_new(&c, 65536, 5, lc_crash_boot, LC_MNT), "lane 3");
	lc_set(&c, lc_crash_boot, LC_MNT, SET + 1, 3);
	lc_write(&c, 1, 5, 6, "QQ");
	U_REQUIRE(save_lane(&a, "log.77.1", 1) && save_lane(&b, "log.77.1", 2) &&
			  save_lane(&c, "log.77.1", 3),
		  "save lanes");
	U_REQUIRE(recover(&m, "log.77.1") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "BBAC456789") == 0, "content \"%s\"", lc_read(tpath));
	U_CHECK(rep.logs == 1 && rep.records == 3, "logs %u records %u", rep.logs, rep.records);
	U_CHECK(lc_count(dir, "lane.") == 0 && lc_count(dir, "log.free.") == 4,
		"the set retired: lanes %d, free %d", lc_count(dir, "lane."),
		lc_count(dir, "log.free."));
	U_REQUIRE(recover(NULL, NULL) == 0, "again");
	U_CHECK(rep.logs == 0 && rep.records == 0, "nothing twice (logs %u)", rep.logs);
}

U_TEST(lane_locked, "a set with a lane still locked is left for later")
{
	U_REQUIRE(start("0123456789"), "setup");
	struct lc_log m, a;
	U_REQUIRE(crash_log(&m, 5), "main");
	lc_set(&m, lc_crash_boot, LC_MNT, SET, 0);
	lc_file(&m, 1, 1, tpath, ino, igen);
	U_REQUIRE(lc_new(&a, 65536, 5, lc_crash_boot, LC_MNT), "lane 1");
	lc_set(&a, lc_crash_boot, LC_MNT, SET, 1);
	lc_write(&a, 1, 2, 0, "LL");
	U_REQUIRE(save_lane(&a, "log.78.1", 1), "save lane");
	char p[LC_PATH];
	snprintf(p, sizeof(p), "%s/lane.78.1.1", dir);
	int held = open(p, O_RDONLY | O_CLOEXEC);
	U_REQUIRE(held >= 0 && flock(held, LOCK_EX) == 0, "hold the lane");
	U_REQUIRE(recover(&m, "log.78.1") == 0, "recover");
	U_CHECK(strcmp(lc_read(tpath), "0123456789") == 0 && lc_exists(dir, "log.78.1") &&
			lc_exists(dir, "lane.78.1.1"),
		"left alone: \"%s\"", lc_read(tpath));
	close(held);
	U_REQUIRE(recover(NULL, NULL) == 0, "recover, the lane free");
	U_CHECK(strcmp(lc_read(tpath), "LL23456789") == 0 && !lc_exists(dir, "log.78.1"),
		"replayed: \"%s\"", lc_read(tpath));
}
