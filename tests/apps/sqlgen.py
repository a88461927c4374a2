#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Prints the deterministic SQLite workload of tests/suites/apps-sqlite3.sh:
#   sqlgen.py JOURNAL_MODE [MMAP_SIZE]
# Several transactions (thousands of INSERTs, autocommit INSERTs, UPDATE,
# DELETE, a rolled-back transaction, savepoints, CREATE INDEX, VACUUM), a
# small page cache so that dirty pages spill mid-transaction, and queries
# whose output the suite compares.
import random
import sys

mode = sys.argv[1]
mmap_size = int(sys.argv[2]) if len(sys.argv) > 2 else 0
rng = random.Random(7)
out = []
w = out.append


def text(n):
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(n))


def row(i, big=False):
    n = rng.randrange(2000, 12000) if big else rng.randrange(0, 300)
    return "INSERT INTO t(k, name, data) VALUES (%d, '%s', X'%s');" % (
        rng.randrange(1_000_000), text(rng.randrange(1, 40)), rng.randbytes(n).hex())


w(".bail on")
w("PRAGMA journal_mode=%s;" % mode)
w("PRAGMA cache_size=50;")
w("PRAGMA mmap_size=%d;" % mmap_size)
w("CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, name TEXT, data BLOB);")
w("CREATE TABLE log(id INTEGER PRIMARY KEY, what TEXT);")
w("BEGIN;")
for i in range(3000):
    w(row(i))
w("COMMIT;")
for i in range(150):  # one transaction (and one sync) each
    w(row(i))
    w("INSERT INTO log(what) VALUES ('autocommit %d');" % i)
w("BEGIN;")
for i in range(600):
    w(row(i, big=True))  # overflow pages
w("COMMIT;")
w("SELECT 'after inserts', count(*), sum(k), total(length(data)) FROM t;")
w("BEGIN; UPDATE t SET name = upper(name), k = k + 1 WHERE k % 3 = 0; COMMIT;")
w("UPDATE t SET data = substr(data, 1, length(data) / 2) WHERE id % 5 = 0;")
w("DELETE FROM t WHERE k % 7 = 0;")
w("BEGIN; DELETE FROM t WHERE id % 2 = 0; UPDATE t SET k = -k; ROLLBACK;")
w("SAVEPOINT a; DELETE FROM t WHERE id < 500; SAVEPOINT b;"
  " UPDATE t SET k = 0; ROLLBACK TO b; RELEASE a;")
w("CREATE INDEX t_k ON t(k);")
w("CREATE INDEX t_name ON t(name, id);")
w("SELECT 'after updates', count(*), sum(k), total(length(data)) FROM t;")
if mode.upper() == "WAL":
    w("PRAGMA wal_checkpoint(TRUNCATE);")
w("VACUUM;")
w("BEGIN;")
for i in range(1000):
    w(row(i))
w("COMMIT;")
w("DELETE FROM t WHERE id % 11 = 0;")
w("SELECT 'final', count(*), sum(k), total(length(data)), max(id) FROM t;")
w("SELECT k, name, length(data), hex(substr(data, 1, 8)) FROM t INDEXED BY t_k"
  " WHERE k BETWEEN 1000 AND 60000 ORDER BY k, id;")
w("PRAGMA integrity_check;")
print("\n".join(out))
