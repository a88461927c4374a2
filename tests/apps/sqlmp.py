#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Two processes on one SQLite database (tests/suites/apps-sqlite3.sh):
#   sqlmp.py DB JOURNAL_MODE
# The parent keeps its connection open while a child process (this script
# again, "child" argument) writes; in WAL mode the parent also holds a read
# transaction across a child's commit (its snapshot must not change) and
# checkpoints while the child's connection is gone. Prints what each side
# sees; deterministic.
import random
import sqlite3
import subprocess
import sys

db, mode = sys.argv[1], sys.argv[2]


def rows(con, who, rnd, n):
    rng = random.Random(rnd * 1000 + (who == "child"))
    con.execute("BEGIN IMMEDIATE")
    for i in range(n):
        con.execute("INSERT INTO m(who, rnd, v) VALUES (?, ?, ?)",
                    (who, rnd, rng.randbytes(rng.randrange(0, 6000))))
    con.execute("COMMIT")


def seen(con):
    return con.execute("SELECT count(*), total(length(v)), group_concat(DISTINCT who) FROM m").fetchone()


if len(sys.argv) > 3:  # the child
    rnd = int(sys.argv[4])
    con = sqlite3.connect(db, isolation_level=None, timeout=30)
    print("  child %d sees" % rnd, seen(con))
    rows(con, "child", rnd, 40)
    con.execute("DELETE FROM m WHERE who = 'parent' AND id % 13 = ?", (rnd % 13,))
    print("  child %d wrote" % rnd, seen(con))
    con.close()
    sys.exit(0)

con = sqlite3.connect(db, isolation_level=None, timeout=30)
print("journal_mode", con.execute("PRAGMA journal_mode=%s" % mode).fetchone()[0])
con.execute("PRAGMA cache_size=20")
con.execute("CREATE TABLE IF NOT EXISTS m(id INTEGER PRIMARY KEY, who TEXT, rnd INTEGER, v BLOB)")
for rnd in range(12):
    rows(con, "parent", rnd, 40)
    wal = mode.upper() == "WAL" and rnd % 3 == 1
    if wal:  # a read transaction that spans the child's commit
        con.execute("BEGIN")
        before = seen(con)
    sys.stdout.flush()
    subprocess.run([sys.executable, __file__, db, mode, "child", str(rnd)], check=True)
    if wal:
        print("snapshot kept", seen(con) == before)
        con.execute("COMMIT")
    if mode.upper() == "WAL" and rnd % 4 == 3:
        print("checkpoint", con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())
    print("parent %d sees" % rnd, seen(con), flush=True)
print("integrity", con.execute("PRAGMA integrity_check").fetchone()[0])
con.close()
