/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the operation log's on-media format (src/oplog/format.h)
 * and the rules recovery reads it by (src/oplog/recover.c): the layout and
 * record lengths; golden CRCs of a fixed WRITE record and header, which pin
 * the format; records written to a file and read back record by record;
 * what the CRC covers (not the crc field, not the padding; every other bit);
 * which entries are records, which are counted as torn or corrupt and which
 * are stepped over silently (another generation, version, op, or a record
 * running past the end); the header checks (v2 with its ident, v1, bad
 * magic, CRC or size) and the same-mount test. recover.c is included, not
 * linked, so that its static corrupt(), read_head() and replay_set() can be
 * called; format.o (sfs_log_record_valid) and crc32c.o are linked. */
#include "../../src/oplog/recover.c"

#include "unit.h"

#define GEN 2

static _Alignas(4096) unsigned char img[16384];

/* Encodes a record at m + at (CRC included); returns the next offset. */
static size_t put(unsigned char *m, size_t at, struct sfs_log_entry e, const void *payload)
{
	e.crc = 0;
	e.version = 1;
	if (e.payload)
		memcpy(m + at + SFS_LOG_UNIT, payload, e.payload);
	e.crc = sfs_log_crc(&e, payload);
	memcpy(m + at, &e, sizeof(e));
	return at + (size_t)sfs_log_record_len(e.payload);
}

static struct sfs_log_entry *at(size_t off)
{
	return (struct sfs_log_entry *)(img + off);
}

U_TEST(layout, "entry/ident offsets, record lengths, magic bytes")
{
	U_CHECK(offsetof(struct sfs_log_entry, op) == 4 &&
			offsetof(struct sfs_log_entry, file) == 12,
		"op/file offsets");
	U_CHECK(offsetof(struct sfs_log_entry, pid) == 48 &&
			offsetof(struct sfs_log_entry, set) == 56,
		"pid/set offsets");
	U_CHECK(offsetof(struct sfs_log_ident, mnt_id) == 16 &&
			offsetof(struct sfs_log_ident, set) == 24 &&
			offsetof(struct sfs_log_ident, lane) == 32,
		"ident mnt_id/set/lane offsets");
	U_CHECK(sfs_log_record_len(0) == 64 && sfs_log_record_len(1) == 128 &&
			sfs_log_record_len(64) == 128 && sfs_log_record_len(65) == 192,
		"record lengths 0,1,64,65 -> %llu %llu %llu %llu",
		(unsigned long long)sfs_log_record_len(0),
		(unsigned long long)sfs_log_record_len(1),
		(unsigned long long)sfs_log_record_len(64),
		(unsigned long long)sfs_log_record_len(65));
	U_CHECK(sfs_log_record_len(UINT32_MAX) == 64 + (1ull << 32), "no 32-bit overflow");
	uint64_t m2 = SFS_LOG_MAGIC, m1 = SFS_LOG_MAGIC_V1;
	U_CHECK(memcmp(&m2, "SSFSLOG2", 8) == 0 && memcmp(&m1, "SSFSLOG1", 8) == 0,
		"magic bytes on media");
}

/* Golden values (an independent bitwise CRC32C over the packed bytes). */
U_TEST(golden, "CRCs of a fixed WRITE record and v2 header")
{
	struct sfs_log_entry w = {.op = SFS_LOG_WRITE,
				  .version = 1,
				  .payload = 5,
				  .file = 7,
				  .gen = 2,
				  .seq = 9,
				  .off = 4096,
				  .arg = 4101,
				  .pid = 1234};
	w.crc = 0xdeadbeef; /* not covered */
	U_CHECK(sfs_log_crc(&w, "hello") == 0x69ca6094u, "WRITE record crc %08x",
		sfs_log_crc(&w, "hello"));
	struct {
		struct sfs_log_entry e;
		struct sfs_log_ident id;
	} h = {.e = {.op = SFS_LOG_HEADER,
		     .version = 1,
		     .payload = 64,
		     .gen = 1,
		     .off = SFS_LOG_MAGIC,
		     .arg = 1 << 20},
	       .id = {.mnt_id = 0x1234}};
	for (int i = 0; i < 16; i++)
		h.id.boot_id[i] = (uint8_t)i;
	U_CHECK(sfs_log_crc(&h.e, &h.id) == 0xe5b24854u, "header crc %08x",
		sfs_log_crc(&h.e, &h.id));
}

/* FILE, WRITE, TRUNCATE, COMMIT into a file, read back by the rules. */
U_TEST(roundtrip, "FILE/WRITE/TRUNCATE/COMMIT encoded, read back")
{
	unsigned char fpay[200] = {0};
	struct file_handle fh = {.handle_bytes = 0};
	memcpy(fpay, &fh, sizeof(fh));
	strcpy((char *)fpay + sizeof(fh), "/mnt/x/a rather long path/to/the/file.dat");
	uint32_t flen = (uint32_t)(sizeof(fh) + strlen((char *)fpay + sizeof(fh)) + 1);
	char data[100];
	for (int i = 0; i < 100; i++)
		data[i] = (char)('a' + i % 26);
	const struct sfs_log_entry want[] = {
		{.op = SFS_LOG_FILE,
		 .payload = flen,
		 .file = 1,
		 .gen = GEN,
		 .seq = 1,
		 .off = 77,
		 .arg = 5},
		{.op = SFS_LOG_WRITE,
		 .payload = 100,
		 .file = 1,
		 .gen = GEN,
		 .seq = 2,
		 .off = 8,
		 .arg = 108},
		{.op = SFS_LOG_TRUNCATE, .file = 1, .gen = GEN, .seq = 3, .off = 50},
		{.op = SFS_LOG_COMMIT, .file = 1, .gen = GEN, .seq = 4},
	};
	const void *pay[] = {fpay, data, NULL, NULL};
	memset(img, 0, sizeof(img));
	size_t p = SFS_LOG_RECORDS_OFF;
	for (int i = 0; i < 4; i++)
		p = put(img, p, want[i], pay[i]);
	U_CHECK(p == SFS_LOG_RECORDS_OFF + 128 + 192 + 64 + 64, "encoded length %zu", p);
	const char *dir = u_tmpdir();
	U_REQUIRE(dir, "tmpdir");
	char path[4200];
	snprintf(path, sizeof(path), "%s/log", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	U_REQUIRE(fd >= 0 && pwrite(fd, img, p, 0) == (ssize_t)p, "write %s", path);
	unsigned char *m = mmap(NULL, p, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	U_REQUIRE(m != MAP_FAILED, "mmap");
	size_t q = SFS_LOG_RECORDS_OFF;
	for (int i = 0; i < 4; i++) {
		const struct sfs_log_entry *e = (const void *)(m + q);
		U_CHECK(sfs_log_record_valid(e, GEN, p - q), "record %d not valid", i);
		U_CHECK(e->op == want[i].op && e->file == want[i].file && e->seq == want[i].seq &&
				e->off == want[i].off && e->arg == want[i].arg &&
				e->payload == want[i].payload,
			"record %d fields", i);
		U_CHECK(!e->payload || memcmp(e + 1, pay[i], e->payload) == 0, "record %d payload",
			i);
		q += (size_t)sfs_log_record_len(e->payload);
	}
	U_CHECK(q == p, "decoded length %zu", q);
	munmap(m, p);
}

/* What the CRC covers, and which entries count as corrupt. */
U_TEST(crc, "CRC covers entry (not crc) and payload, not padding")
{
	memset(img, 0, sizeof(img));
	char data[70], data2[130];
	memset(data, 'x', sizeof(data));
	memset(data2, 'y', sizeof(data2));
	struct sfs_log_entry w = {.op = SFS_LOG_WRITE,
				  .payload = 70,
				  .file = 3,
				  .gen = GEN,
				  .seq = 5,
				  .off = 4096,
				  .arg = 4166};
	size_t len = put(img, 0, w, data);
	U_REQUIRE(sfs_log_record_valid(at(0), GEN, len) && !corrupt(at(0), GEN, len),
		  "fresh record");
	img[64 + 70] = 0xff; /* padding after the payload */
	U_CHECK(sfs_log_record_valid(at(0), GEN, len), "padding is not covered");
	img[64 + 70] = 0;
	/* Every bit of entry (but crc) and payload, flipped alone: rejected;
	 * counted as corrupt unless the flip makes it no record of this kind. */
	int accepted = 0, not_corrupt = 0;
	for (size_t bit = 32; bit < (64 + 70) * 8; bit++) {
		img[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		accepted += sfs_log_record_valid(at(0), GEN, len);
		bool header_ok = at(0)->gen == GEN && at(0)->version == 1 &&
				 at(0)->op == SFS_LOG_WRITE && at(0)->payload <= 128;
		not_corrupt += header_ok && !corrupt(at(0), GEN, len);
		img[bit / 8] ^= (unsigned char)(1u << (bit % 8));
	}
	U_CHECK(accepted == 0, "%d single-bit flips accepted", accepted);
	U_CHECK(not_corrupt == 0, "%d flips of covered bytes not counted corrupt", not_corrupt);
	at(0)->crc ^= 1;
	U_CHECK(!sfs_log_record_valid(at(0), GEN, len) && corrupt(at(0), GEN, len),
		"bad crc field");
	/* The last payload byte counts, for every length. */
	int missed = 0;
	for (uint32_t n = 1; n <= 130; n++) {
		w.payload = n;
		len = put(img, 0, w, data2);
		img[64 + n - 1] ^= 0x80;
		missed += sfs_log_record_valid(at(0), GEN, len);
	}
	U_CHECK(missed == 0, "%d payload lengths whose last byte is not covered", missed);
}

/* Entries that are stepped over without being counted. */
U_TEST(rules, "generation, op, version, room: skipped, not counted")
{
	memset(img, 0, sizeof(img));
	U_CHECK(!sfs_log_record_valid(at(0), 0, 64) && !corrupt(at(0), 0, 64),
		"a zero unit is no record");
	struct sfs_log_entry base = {
		.op = SFS_LOG_TRUNCATE, .file = 1, .gen = GEN, .seq = 1, .off = 9};
	put(img, 0, base, NULL);
	U_CHECK(sfs_log_record_valid(at(0), GEN, 64), "TRUNCATE of this generation");
	U_CHECK(!sfs_log_record_valid(at(0), GEN + 1, 64) && !corrupt(at(0), GEN + 1, 64),
		"older generation");
	for (int op = 0; op < 8; op++) {
		struct sfs_log_entry e = base;
		e.op = (uint8_t)op;
		put(img, 0, e, NULL);
		bool rec = op >= SFS_LOG_FILE && op <= SFS_LOG_WRITE_TIMED;
		U_CHECK(sfs_log_record_valid(at(0), GEN, 64) == rec && !corrupt(at(0), GEN, 64),
			"op %d", op);
	}
	put(img, 0, base, NULL);
	at(0)->version = 2;
	at(0)->crc = sfs_log_crc(at(0), NULL);
	U_CHECK(!sfs_log_record_valid(at(0), GEN, 64) && !corrupt(at(0), GEN, 64), "version 2");
	/* A record whose payload runs past the end: torn off, not counted. */
	char data[64] = "abc";
	struct sfs_log_entry w = {
		.op = SFS_LOG_WRITE, .payload = 64, .file = 1, .gen = GEN, .seq = 2};
	put(img, 0, w, data);
	U_CHECK(sfs_log_record_valid(at(0), GEN, 128) && !sfs_log_record_valid(at(0), GEN, 127) &&
			!corrupt(at(0), GEN, 127),
		"record past the end of the log");
}

/* read_head's checks, then replay_set: the generation, or 0 for no log. */
static uint64_t header(uint64_t len, bool *same, unsigned *skipped)
{
	struct sfs_recover_env env = {.mnt_id = 0x1234, .root_fd = -1};
	for (int i = 0; i < 16; i++)
		env.boot_id[i] = (uint8_t)i;
	struct sfs_recovery rep = {0};
	struct replay r = {.env = &env, .rep = &rep};
	struct log_head hd;
	uint64_t gen = 0;
	if (read_head(&r, img, len, &hd)) {
		replay_set(&r, img, len, &hd, NULL, NULL, 0);
		gen = hd.gen;
	}
	free(r.files);
	*same = r.same_mount;
	*skipped = rep.skipped;
	return gen;
}

U_TEST(header, "v2/v1 headers, magic, crc, size, same mount")
{
	struct {
		struct sfs_log_entry e;
		struct sfs_log_ident id;
	} h = {.e = {.op = SFS_LOG_HEADER, .payload = 64, .gen = 7, .off = SFS_LOG_MAGIC}};
	for (int i = 0; i < 16; i++)
		h.id.boot_id[i] = (uint8_t)i;
	h.id.mnt_id = 0x1234;
	struct sfs_log_entry torn = {.op = SFS_LOG_WRITE, .gen = 7, .seq = 1, .file = 1};
	bool same;
	unsigned sk;
	memset(img, 0, sizeof(img));
	put(img, 0, h.e, &h.id);
	put(img, 128, torn, NULL);
	put(img, SFS_LOG_RECORDS_OFF, torn, NULL);
	at(128)->crc ^= 1;
	at(SFS_LOG_RECORDS_OFF)->crc ^= 1;
	U_CHECK(header(sizeof(img), &same, &sk) == 7 && same && sk == 1,
		"v2, same boot and mount, records from 8192 (skipped %u)", sk);
	U_CHECK(header(SFS_LOG_RECORDS_OFF - 64, &same, &sk) == 0, "v2 shorter than 8192");
	h.id.mnt_id = 0x1235;
	put(img, 0, h.e, &h.id);
	U_CHECK(header(sizeof(img), &same, &sk) == 7 && !same, "v2, another mount");
	h.id.mnt_id = 0x1234;
	h.id.boot_id[15] ^= 1;
	put(img, 0, h.e, &h.id);
	U_CHECK(header(sizeof(img), &same, &sk) == 7 && !same, "v2, another boot");
	at(0)->crc ^= 1;
	U_CHECK(header(sizeof(img), &same, &sk) == 0, "v2, bad header crc");
	h.e.payload = 0;
	put(img, 0, h.e, NULL);
	U_CHECK(header(sizeof(img), &same, &sk) == 0, "v2 without its ident");
	h.e.payload = 64;
	h.e.off = SFS_LOG_MAGIC + 1;
	put(img, 0, h.e, &h.id);
	U_CHECK(header(sizeof(img), &same, &sk) == 0, "unknown magic");
	h.e.off = SFS_LOG_MAGIC;
	h.e.op = SFS_LOG_FILE;
	put(img, 0, h.e, &h.id);
	U_CHECK(header(sizeof(img), &same, &sk) == 0, "first record not a header");
	/* v1: no ident, records from 64, replayed whole (never same mount). */
	memset(img, 0, sizeof(img));
	struct sfs_log_entry v1 = {.op = SFS_LOG_HEADER, .gen = 7, .off = SFS_LOG_MAGIC_V1};
	put(img, 0, v1, NULL);
	put(img, 128, torn, NULL);
	at(128)->crc ^= 1;
	U_CHECK(header(sizeof(img), &same, &sk) == 7 && !same && sk == 1,
		"v1 header, records from 64 (skipped %u)", sk);
	at(0)->crc ^= 1;
	U_CHECK(header(sizeof(img), &same, &sk) == 0, "v1, bad header crc");
}
