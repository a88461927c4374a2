#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the demo's SQLite script to stdout: a key-value table filled in
transactions of 500 rows (WAL mode, synchronous=NORMAL, the setting most
applications use with WAL), an index build, 200 scans and a checkpoint.
Deterministic: the same N gives the same script and the same answers."""
import random
import sys

def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    rng = random.Random(7)
    out = sys.stdout
    out.write("PRAGMA journal_mode=WAL;\nPRAGMA synchronous=NORMAL;\n")
    out.write("CREATE TABLE kv(id INTEGER PRIMARY KEY, k TEXT, v TEXT);\n")
    for start in range(0, n, 500):
        out.write("BEGIN;\n")
        for i in range(start, min(n, start + 500)):
            val = "%064x" % rng.getrandbits(256)
            out.write(f"INSERT INTO kv(k, v) VALUES('key{rng.getrandbits(40):x}', '{val * 3}');\n")
        out.write("COMMIT;\n")
    out.write("CREATE INDEX kv_k ON kv(k);\n")
    for q in range(200):
        out.write(f"SELECT count(*), sum(length(v)), max(k) FROM kv WHERE id % {q + 2} = 0;\n")
    out.write("PRAGMA wal_checkpoint(TRUNCATE);\nPRAGMA integrity_check;\nSELECT count(*) FROM kv;\n")

if __name__ == "__main__":
    main()
