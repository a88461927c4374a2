#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SQLite with transactions, for the crash harness (tests/crash/README.md).

  sqlwork.py run DIR ACKFILE SEED     transactions until killed
  sqlwork.py check DIR ACKFILE MODE KIND

run: db.sqlite in rollback-journal or WAL mode (by seed), synchronous=EXTRA.
Transaction i inserts row i (a payload of 100..6000 bytes derived from i),
updates row i//3 (when it exists) to a new payload, and sets the counter to
i, in one transaction; "B i" is acknowledged before it, "C i" after COMMIT
returned. check (without the library): integrity_check is ok, the rows are
exactly 1..n with their payloads (updated ones included), the counter is n,
and n is at least the last committed transaction and at most the last begun
one. SQLite syncs at every commit, so this holds in every mode and for any
crash."""
import hashlib
import os
import sqlite3
import sys


def payload(i, version):
    h = hashlib.sha256(f"{i}:{version}".encode()).digest()
    n = 100 + int.from_bytes(h[:2], "little") % 5900
    return (h * (n // len(h) + 1))[:n]


def expected(n):
    """Rows 1..n after n transactions: (payload version of each row)."""
    ver = {}
    for i in range(1, n + 1):
        ver[i] = 0
        j = i // 3
        if j >= 1:
            ver[j] = i
    return ver


def run(d, ackpath, seed):
    fd = os.open(ackpath, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    con = sqlite3.connect(os.path.join(d, "db.sqlite"), isolation_level=None)
    con.execute("PRAGMA journal_mode=" + ("WAL" if seed % 2 else "DELETE"))
    # EXTRA: in rollback-journal mode the commit is the journal's unlink,
    # which FULL does not sync (a power cut may bring the journal back and
    # roll the last transaction back); EXTRA syncs the directory.
    con.execute("PRAGMA synchronous=EXTRA")
    con.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v INTEGER, p BLOB)")
    con.execute("CREATE TABLE IF NOT EXISTS c (k INTEGER PRIMARY KEY, n INTEGER)")
    con.execute("INSERT OR IGNORE INTO c VALUES (0, 0)")
    os.write(fd, b"I\n")
    i = 0
    while True:
        i += 1
        os.write(fd, f"B {i}\n".encode())
        con.execute("BEGIN")
        con.execute("INSERT INTO t VALUES (?, 0, ?)", (i, payload(i, 0)))
        j = i // 3
        if j >= 1:
            con.execute("UPDATE t SET v = ?, p = ? WHERE id = ?", (i, payload(j, i), j))
        con.execute("UPDATE c SET n = ? WHERE k = 0", (i,))
        con.execute("COMMIT")
        os.write(fd, f"C {i}\n".encode())


def check(d, ackpath, mode, kind):
    last_b = last_c = 0
    init = False
    try:
        with open(ackpath, "rb") as f:
            data = f.read()
    except FileNotFoundError:  # killed before it started
        data = b""
    for line in data.split(b"\n")[:-1]:  # a torn last line is ignored
        w = line.split()
        if w == [b"I"]:
            init = True
        elif len(w) == 2 and w[0] == b"B":
            last_b = int(w[1])
        elif len(w) == 2 and w[0] == b"C":
            last_c = int(w[1])
    path = os.path.join(d, "db.sqlite")
    if not init:
        print("sqlite: killed before the schema was committed: nothing to check")
        return 0
    bad = []
    con = sqlite3.connect(path)
    ic = con.execute("PRAGMA integrity_check").fetchall()
    if ic != [("ok",)]:
        bad.append(f"integrity_check: {ic[:3]}")
    n = con.execute("SELECT n FROM c WHERE k = 0").fetchone()[0]
    rows = con.execute("SELECT id, v, p FROM t ORDER BY id").fetchall()
    if n < last_c:
        bad.append(f"{n} transactions in the database, {last_c} were committed")
    if n > last_b:
        bad.append(f"{n} transactions in the database, only {last_b} begun")
    want = expected(n)
    if [r[0] for r in rows] != list(range(1, n + 1)):
        bad.append(f"rows are not exactly 1..{n}: {len(rows)} rows")
    else:
        for rid, v, p in rows:
            if v != want[rid] or p != payload(rid, v):
                bad.append(f"row {rid}: version {v}, expected {want[rid]}, payload "
                           f"{'ok' if p == payload(rid, v) else 'corrupt'}")
                break
    for b in bad:
        print("VIOLATION: sqlite:", b)
    print(f"sqlite: {n} transactions (begun {last_b}, committed {last_c}), mode {mode}, {kind}")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) == 6 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
