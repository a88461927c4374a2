/* SPDX-License-Identifier: Apache-2.0 */
/* Description: YCSB on LevelDB, the SplitFS paper's key-value store benchmark
 * (§5), as a small C++ driver linking Debian's libleveldb. Records are 16 B
 * keys ("user" + 12 hex digits of a bijective scramble of the record number)
 * and 1 KiB values. Phases, in YCSB's recommended order, each timed alone:
 *
 *   load_sync   insert SYNC_RECORDS records into a separate database with
 *               WriteOptions.sync = true (an fdatasync of the log per insert)
 *   load        insert RECORDS records (sync = false, YCSB's default)
 *   A           50% read, 50% update                      zipfian
 *   B           95% read, 5% update                       zipfian
 *   C           100% read                                 zipfian
 *   F           50% read, 50% read-modify-write           zipfian
 *   D           95% read, 5% insert                       latest
 *   E           95% scan (1-100 records), 5% insert       zipfian
 *
 * The generators are YCSB's: the scrambled zipfian (theta 0.99 over 10^10
 * items, FNV-64 hashed onto the key space, redrawn past the last insert) and
 * "latest" (a zipfian counted back from the newest record). Fixed seeds.
 * Every value carries its key; a read that misses or returns another
 * record's value is an error. At the end the database is reopened and every
 * record checked (count and contents). Only then are the results printed,
 * one JSON line per phase, in operations per second:
 *   {"metric":"A","value":123456.7,"unit":"ops/s","better":"higher"}
 * Exit status 1 on any LevelDB error or failed check, with nothing printed.
 *
 *   ycsb_leveldb DIR RECORDS OPERATIONS SYNC_RECORDS WRITE_BUFFER_BYTES */
#include <leveldb/db.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

const size_t kKeySize = 16;
const size_t kValueSize = 1024;

[[noreturn]] void die(const std::string &what)
{
	std::fprintf(stderr, "ycsb_leveldb: %s\n", what.c_str());
	std::exit(1);
}

void check(const leveldb::Status &s, const char *what)
{
	if (!s.ok())
		die(std::string(what) + ": " + s.ToString());
}

/* xoshiro256** seeded by splitmix64: fast and the same everywhere. */
class Rng {
      public:
	explicit Rng(uint64_t seed)
	{
		for (auto &w : s_) {
			seed += 0x9e3779b97f4a7c15ULL;
			uint64_t z = seed;
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			w = z ^ (z >> 31);
		}
	}
	uint64_t next()
	{
		uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
		s_[2] ^= s_[0];
		s_[3] ^= s_[1];
		s_[1] ^= s_[2];
		s_[0] ^= s_[3];
		s_[2] ^= t;
		s_[3] = rotl(s_[3], 45);
		return r;
	}
	double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; } /* [0, 1) */
	uint64_t range(uint64_t lo, uint64_t hi)
	{
		return lo + next() % (hi - lo + 1);
	} /* [lo, hi] */

      private:
	static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
	uint64_t s_[4];
};

/* YCSB's Utils.fnvhash64 (FNV-1a over the 8 bytes, absolute value). */
int64_t fnvhash64(int64_t val)
{
	uint64_t h = 0xCBF29CE484222325ULL;
	for (int i = 0; i < 8; i++) {
		h ^= static_cast<uint64_t>(val) & 0xff;
		h *= 1099511628211ULL;
		val = static_cast<int64_t>(static_cast<uint64_t>(val) >> 8);
	}
	int64_t s = static_cast<int64_t>(h);
	return s == INT64_MIN ? INT64_MAX : (s < 0 ? -s : s);
}

/* YCSB's ZipfianGenerator (Gray et al., "Quickly generating billion-record
 * synthetic databases"): values in [base, base + items), the item count may
 * grow between calls (zeta is extended incrementally). */
class Zipfian {
      public:
	static constexpr double kTheta = 0.99;

	Zipfian(int64_t base, int64_t items, double zetan = -1.0)
	    : base_(base), count_for_zeta_(items), alpha_(1.0 / (1.0 - kTheta)),
	      zeta2theta_(zeta(0, 2, 0.0)), half_pow_theta_(1.0 + std::pow(0.5, kTheta))
	{
		zetan_ = zetan > 0 ? zetan : zeta(0, items, 0.0);
		eta_ = compute_eta(items);
	}

	int64_t next(Rng &rng, int64_t items)
	{
		if (items > count_for_zeta_) {
			zetan_ = zeta(count_for_zeta_, items, zetan_);
			count_for_zeta_ = items;
			eta_ = compute_eta(items);
		}
		double u = rng.uniform(), uz = u * zetan_;
		if (uz < 1.0)
			return base_;
		if (uz < half_pow_theta_)
			return base_ + 1;
		return base_ + static_cast<int64_t>(static_cast<double>(items) *
						    std::pow(eta_ * u - eta_ + 1.0, alpha_));
	}
	int64_t next(Rng &rng) { return next(rng, count_for_zeta_); }

      private:
	static double zeta(int64_t from, int64_t n, double sum)
	{
		for (int64_t i = from; i < n; i++)
			sum += 1.0 / std::pow(static_cast<double>(i + 1), kTheta);
		return sum;
	}
	double compute_eta(int64_t items) const
	{
		return (1.0 - std::pow(2.0 / static_cast<double>(items), 1.0 - kTheta)) /
		       (1.0 - zeta2theta_ / zetan_);
	}

	int64_t base_, count_for_zeta_;
	double alpha_, zeta2theta_, half_pow_theta_, zetan_ = 0, eta_ = 0;
};

/* YCSB's ScrambledZipfianGenerator: a zipfian over 10^10 items (zeta
 * precomputed by YCSB), hashed onto [0, items). */
class ScrambledZipfian {
      public:
	explicit ScrambledZipfian(int64_t items)
	    : items_(items), zipf_(0, 10000000000LL, 26.46902820178302)
	{
	}
	int64_t next(Rng &rng) { return fnvhash64(zipf_.next(rng)) % items_; }

      private:
	int64_t items_;
	Zipfian zipf_;
};

/* YCSB's SkewedLatestGenerator: the newest records are the most popular. */
class Latest {
      public:
	explicit Latest(int64_t last) : zipf_(0, last) {}
	int64_t next(Rng &rng, int64_t last) { return last - zipf_.next(rng, last); }

      private:
	Zipfian zipf_;
};

/* Record number -> 16-byte key. A bijection on 48 bits (odd multipliers and
 * xor-shifts), so keys are spread over the key space like YCSB's hashed
 * inserts and never collide. */
std::string key_of(int64_t n)
{
	const uint64_t mask = (1ULL << 48) - 1;
	uint64_t x = static_cast<uint64_t>(n) & mask;
	x = (x * 0x9E3779B97F4BULL) & mask;
	x ^= x >> 23;
	x = (x * 0xC2B2AE3D27D5ULL) & mask;
	x ^= x >> 25;
	char buf[kKeySize + 1];
	std::snprintf(buf, sizeof(buf), "user%012" PRIx64, x);
	return std::string(buf, kKeySize);
}

/* A fresh random 1 KiB value that starts with its key. */
void make_value(Rng &rng, const std::string &key, std::string &value)
{
	value.resize(kValueSize);
	std::memcpy(&value[0], key.data(), kKeySize);
	for (size_t i = kKeySize; i < kValueSize; i += 8) {
		uint64_t r = rng.next();
		std::memcpy(&value[i], &r, 8);
	}
}

void check_value(const std::string &key, const std::string &value)
{
	if (value.size() != kValueSize || std::memcmp(value.data(), key.data(), kKeySize) != 0)
		die("record " + key + ": wrong value (" + std::to_string(value.size()) +
		    " bytes, starts " + value.substr(0, kKeySize) + ")");
}

double seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::unique_ptr<leveldb::DB> open_db(const std::string &path, size_t write_buffer, bool create)
{
	leveldb::Options o;
	o.create_if_missing = create;
	o.error_if_exists = create;
	o.write_buffer_size = write_buffer;
	leveldb::DB *db = nullptr;
	check(leveldb::DB::Open(o, path, &db), ("open " + path).c_str());
	return std::unique_ptr<leveldb::DB>(db);
}

struct Result {
	std::string metric;
	double ops_per_s;
};

class Bench {
      public:
	Bench(leveldb::DB *db, int64_t records) : db_(db), records_(records) {}

	/* Inserts records [0, n) in order; returns seconds. */
	double load(int64_t n, bool sync, uint64_t seed)
	{
		Rng rng(seed);
		leveldb::WriteOptions wo;
		wo.sync = sync;
		std::string value;
		auto t0 = std::chrono::steady_clock::now();
		for (int64_t i = 0; i < n; i++) {
			std::string key = key_of(i);
			make_value(rng, key, value);
			check(db_->Put(wo, key, value), "load put");
		}
		return seconds_since(t0);
	}

	enum Op { READ, UPDATE, INSERT, SCAN, RMW };
	struct Mix {
		const char *name;
		double read, update, insert, scan, rmw;
		bool latest;
	};

	/* Runs `ops` operations of the mix; returns seconds. */
	double run(const Mix &mix, int64_t ops, uint64_t seed)
	{
		Rng rng(seed);
		/* YCSB sizes the zipfian key chooser for the inserts it expects. */
		int64_t expected_new =
			static_cast<int64_t>(static_cast<double>(ops) * mix.insert * 2.0);
		ScrambledZipfian zipf(records_ + expected_new);
		std::unique_ptr<Latest> latest(mix.latest ? new Latest(records_ - 1) : nullptr);
		leveldb::ReadOptions ro;
		leveldb::WriteOptions wo;
		std::string value, got;
		auto choose = [&]() -> int64_t {
			if (mix.latest)
				return latest->next(rng, records_ - 1);
			int64_t k;
			do
				k = zipf.next(rng);
			while (k >= records_);
			return k;
		};
		auto t0 = std::chrono::steady_clock::now();
		for (int64_t i = 0; i < ops; i++) {
			double p = rng.uniform();
			Op op = RMW;
			if (p < mix.read)
				op = READ;
			else if ((p -= mix.read) < mix.update)
				op = UPDATE;
			else if ((p -= mix.update) < mix.insert)
				op = INSERT;
			else if ((p -= mix.insert) < mix.scan)
				op = SCAN;
			if (op == INSERT) {
				std::string key = key_of(records_);
				make_value(rng, key, value);
				check(db_->Put(wo, key, value), "insert");
				records_++;
				continue;
			}
			std::string key = key_of(choose());
			switch (op) {
			case READ:
				get(ro, key, got);
				break;
			case UPDATE:
				make_value(rng, key, value);
				check(db_->Put(wo, key, value), "update");
				break;
			case RMW:
				get(ro, key, got);
				make_value(rng, key, value);
				check(db_->Put(wo, key, value), "read-modify-write");
				break;
			case SCAN:
				scan(ro, key, static_cast<int>(rng.range(1, 100)));
				break;
			case INSERT:
				break;
			}
		}
		return seconds_since(t0);
	}

	int64_t records() const { return records_; }

      private:
	void get(const leveldb::ReadOptions &ro, const std::string &key, std::string &value)
	{
		leveldb::Status s = db_->Get(ro, key, &value);
		if (s.IsNotFound())
			die("read " + key + ": record missing");
		check(s, "read");
		check_value(key, value);
	}

	void scan(const leveldb::ReadOptions &ro, const std::string &start, int len)
	{
		std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
		int n = 0;
		for (it->Seek(start); it->Valid() && n < len; it->Next(), n++) {
			leveldb::Slice k = it->key(), v = it->value();
			if (k.size() != kKeySize || v.size() != kValueSize ||
			    std::memcmp(v.data(), k.data(), kKeySize) != 0)
				die("scan from " + start + ": bad record " + k.ToString());
		}
		check(it->status(), "scan");
		if (n == 0)
			die("scan from " + start + ": no record (the start key exists)");
	}

	leveldb::DB *db_;
	int64_t records_;
};

/* Reopens the database and checks that it holds exactly records [0, n). */
void verify(const std::string &path, size_t write_buffer, int64_t n)
{
	auto db = open_db(path, write_buffer, false);
	leveldb::ReadOptions ro;
	ro.fill_cache = false;
	std::unique_ptr<leveldb::Iterator> it(db->NewIterator(ro));
	int64_t count = 0;
	for (it->SeekToFirst(); it->Valid(); it->Next(), count++) {
		leveldb::Slice k = it->key(), v = it->value();
		if (k.size() != kKeySize || v.size() != kValueSize ||
		    std::memcmp(v.data(), k.data(), kKeySize) != 0)
			die("verify: bad record " + k.ToString());
	}
	check(it->status(), "verify: iterate");
	if (count != n)
		die("verify: " + std::to_string(count) + " records, expected " + std::to_string(n));
	std::string value;
	for (int64_t i = 0; i < n; i++) {
		std::string key = key_of(i);
		leveldb::Status s = db->Get(ro, key, &value);
		if (s.IsNotFound())
			die("verify: record " + key + " missing");
		check(s, "verify: get");
		check_value(key, value);
	}
}

int64_t arg(const char *s, const char *name)
{
	char *end;
	long long v = std::strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < 2)
		die(std::string("bad ") + name + ": " + s);
	return v;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 6) {
		std::fprintf(
			stderr,
			"usage: ycsb_leveldb DIR RECORDS OPERATIONS SYNC_RECORDS WRITE_BUFFER_BYTES\n");
		return 2;
	}
	std::string dir = argv[1];
	int64_t records = arg(argv[2], "RECORDS"), ops = arg(argv[3], "OPERATIONS");
	int64_t sync_records = arg(argv[4], "SYNC_RECORDS");
	size_t write_buffer = static_cast<size_t>(arg(argv[5], "WRITE_BUFFER_BYTES"));
	std::vector<Result> results;

	{
		std::string path = dir + "/ycsb-sync";
		auto db = open_db(path, write_buffer, true);
		Bench b(db.get(), 0);
		double s = b.load(sync_records, true, 1);
		results.push_back({"load_sync", static_cast<double>(sync_records) / s});
		db.reset();
		verify(path, write_buffer, sync_records);
	}

	std::string path = dir + "/ycsb";
	auto db = open_db(path, write_buffer, true);
	Bench b(db.get(), records);
	double s = b.load(records, false, 2);
	results.push_back({"load", static_cast<double>(records) / s});

	/* YCSB's core workloads (read, update, insert, scan, read-modify-write). */
	const Bench::Mix mixes[] = {
		{"A", 0.50, 0.50, 0, 0, 0, false}, {"B", 0.95, 0.05, 0, 0, 0, false},
		{"C", 1.00, 0, 0, 0, 0, false},	   {"F", 0.50, 0, 0, 0, 0.50, false},
		{"D", 0.95, 0, 0.05, 0, 0, true},  {"E", 0, 0, 0.05, 0.95, 0, false},
	};
	uint64_t seed = 10;
	for (const auto &m : mixes) {
		/* Scans read up to 100 records each: a tenth of the operations. */
		int64_t n = m.scan > 0 ? ops / 10 : ops;
		s = b.run(m, n, seed++);
		results.push_back({m.name, static_cast<double>(n) / s});
	}
	int64_t total = b.records();
	db.reset();
	verify(path, write_buffer, total);

	for (const auto &r : results)
		std::printf(
			"{\"metric\":\"%s\",\"value\":%.1f,\"unit\":\"ops/s\",\"better\":\"higher\"}\n",
			r.metric.c_str(), r.ops_per_s);
	return std::fflush(stdout) == 0 ? 0 : 1;
}
