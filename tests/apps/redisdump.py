#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The data set of a running Redis server, for tests/suites/apps-redis.sh:
#   redisdump.py SOCKET
# Databases 0 and 1: the key count, then per key (sorted) its type, element
# count and a hash of its contents, in the format of `redisgen.py expect`.
# Also notes any key with a TTL (the workload sets none).
import socket
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from redisgen import canon  # noqa: E402


class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.f = self.s.makefile("rb")

    def __call__(self, *args):
        a = [x if isinstance(x, bytes) else str(x).encode() for x in args]
        self.s.sendall(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a))
        return self.read()

    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t == b"+":
            return rest
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)
            return data[:-2]
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError("unexpected reply %r" % line)


r = Conn(sys.argv[1])
out = []
for db in (0, 1):
    r("SELECT", db)
    keys, cur = set(), b"0"
    while True:
        cur, ks = r("SCAN", cur, "COUNT", 500)
        keys.update(ks)
        if cur == b"0":
            break
    out.append("db%d keys %d" % (db, len(keys)))
    if r("DBSIZE") != len(keys):
        out.append("db%d DBSIZE %d differs from SCAN" % (db, r("DBSIZE")))
    for k in sorted(keys):
        t = r("TYPE", k).decode()
        if t == "string":
            v = r("GET", k)
        elif t == "list":
            v = r("LRANGE", k, 0, -1)
        elif t == "hash":
            a = r("HGETALL", k)
            v = dict(zip(a[0::2], a[1::2]))
        elif t == "set":
            v = set(r("SMEMBERS", k))
        elif t == "zset":
            a = r("ZRANGE", k, 0, -1, "WITHSCORES")
            v = {m: int(float(s)) for m, s in zip(a[0::2], a[1::2])}
        else:
            out.append("db%d %s unexpected type %s" % (db, k.decode(), t))
            continue
        out.append("db%d %s %s" % (db, k.decode(), canon(t, v)))
        ttl = r("PTTL", k)
        if ttl != -1:
            out.append("db%d %s ttl %d" % (db, k.decode(), ttl))
sys.stdout.write("\n".join(out) + "\n")
