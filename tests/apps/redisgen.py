#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The deterministic Redis workload of tests/suites/apps-redis.sh, and its
# expected data set:
#   redisgen.py cmds PART SCALE  the commands of part PART (1..5): odd parts
#                                as RESP for `redis-cli --pipe`, even parts
#                                as text lines for plain `redis-cli` (one
#                                command, one reply at a time)
#   redisgen.py expect PARTS SCALE  the data set after parts 1..PARTS, in
#                                the format of `redisdump.py` (a model of
#                                every command below)
# SCALE (1 = full) is the fraction of commands each part has; the suite
# runs every configuration at one scale, so the kernel run and the SplitFS
# runs compare like with like.
# Commands: SET, MSET, APPEND, SETRANGE, INCR/INCRBY/DECRBY, DEL, RPUSH,
# LPUSH, LPOP, HSET, HDEL, SADD, SREM, ZADD, ZREM, SELECT (databases 0 and
# 1), MULTI/EXEC; a few large binary values (up to ~700 KB) in the RESP
# parts. No expiry and nothing time-dependent. apps-redis.sh runs parts 1-3
# in one server (a BGREWRITEAOF between 2 and 3), 4-5 in a second one (a BGSAVE
# between them).
import hashlib
import random
import sys

N_CMDS = {1: 2000, 2: 1200, 3: 800, 4: 1200, 5: 800}


class Model:
    def __init__(self):
        self.db = [{}, {}]  # key -> (type, value)
        self.cur = 0

    def d(self):
        return self.db[self.cur]


def b(s):
    return s if isinstance(s, bytes) else str(s).encode()


def gen(part, scale, m, out):
    """Appends part PART's commands (lists of bytes) to OUT, applying them to M."""
    rng = random.Random(4242 + part)
    n = max(10, int(N_CMDS[part] * scale))
    text = part % 2 == 0

    def val(lo, hi):
        k = rng.randrange(lo, hi)
        if rng.random() < 0.5 or text:
            words = [b"redis", b"aof", b"splitfs", b"fsync", b" ", b"\\", b"'", b"\""]
            v = b"".join(rng.choice(words) for _ in range(k // 4 + 1))[:k]
            return v
        return rng.randbytes(k)  # \r\n and NULs included (RESP only)

    def key(kind, n=150):
        return b"%s:%d" % (kind, rng.randrange(n))

    def cmd(*a):
        out.append([b(x) for x in a])

    def drop_empty(k):
        t = m.d().get(k)
        if t and len(t[1]) == 0:
            del m.d()[k]

    def put(k, kind, items):
        """HSET's (field, value) or ZADD's (member, score) items."""
        m.d().setdefault(k, (kind, {}))[1].update(items)

    def forget(k, names):
        """HDEL's fields or ZREM's members; a key left empty goes."""
        if k in m.d():
            for x in names:
                m.d()[k][1].pop(x, None)
            drop_empty(k)

    def one():
        r = rng.random()
        d = m.d()
        if r < 0.12:
            k, v = key(b"str"), val(0, 300)
            cmd("SET", k, v)
            d[k] = ("string", bytearray(v))
        elif r < 0.17:
            pairs = [(key(b"str"), val(0, 100)) for _ in range(rng.randrange(1, 6))]
            cmd("MSET", *[x for p in pairs for x in p])
            for k, v in pairs:
                d[k] = ("string", bytearray(v))
        elif r < 0.27:
            k, v = key(b"str"), val(1, 200)
            cmd("APPEND", k, v)
            d.setdefault(k, ("string", bytearray()))[1].extend(v)
        elif r < 0.30:
            k, off, v = key(b"str"), rng.randrange(0, 400), val(1, 50)
            cmd("SETRANGE", k, off, v)
            s = d.setdefault(k, ("string", bytearray()))[1]
            if len(s) < off:
                s.extend(b"\0" * (off - len(s)))
            s[off:off + len(v)] = v
        elif r < 0.45:
            k = key(b"cnt", 100)
            c = rng.randrange(3)
            by = rng.randrange(-1000, 1000)
            if c == 0:
                cmd("INCR", k)
                by = 1
            elif c == 1:
                cmd("INCRBY", k, by)
            else:
                cmd("DECRBY", k, by)
                by = -by
            old = int(d[k][1]) if k in d else 0
            d[k] = ("string", bytearray(b(old + by)))
        elif r < 0.52:
            ks = [key(rng.choice([b"str", b"cnt", b"list", b"hash", b"set", b"zset"]))
                  for _ in range(rng.randrange(1, 4))]
            cmd("DEL", *ks)
            for k in ks:
                d.pop(k, None)
        elif r < 0.62:
            k = key(b"list", 60)
            vs = [val(0, 80) for _ in range(rng.randrange(1, 5))]
            left = rng.random() < 0.3
            cmd("LPUSH" if left else "RPUSH", k, *vs)
            lst = d.setdefault(k, ("list", []))[1]
            if left:
                for v in vs:
                    lst.insert(0, v)
            else:
                lst.extend(vs)
        elif r < 0.66:
            k = key(b"list", 60)
            cnt = rng.randrange(1, 4)
            cmd("LPOP", k, cnt)
            if k in d:
                del d[k][1][:cnt]
                drop_empty(k)
        elif r < 0.75:
            k = key(b"hash", 40)
            pairs = [(b"f%d" % rng.randrange(30), val(0, 60)) for _ in range(rng.randrange(1, 4))]
            cmd("HSET", k, *[x for p in pairs for x in p])
            put(k, "hash", pairs)
        elif r < 0.78:
            k = key(b"hash", 40)
            fs = [b"f%d" % rng.randrange(30) for _ in range(rng.randrange(1, 4))]
            cmd("HDEL", k, *fs)
            forget(k, fs)
        elif r < 0.85:
            k = key(b"set", 40)
            ms = [b"m%d" % rng.randrange(50) for _ in range(rng.randrange(1, 5))]
            cmd("SADD", k, *ms)
            d.setdefault(k, ("set", set()))[1].update(ms)
        elif r < 0.87:
            k = key(b"set", 40)
            ms = [b"m%d" % rng.randrange(50) for _ in range(rng.randrange(1, 5))]
            cmd("SREM", k, *ms)
            if k in d:
                d[k][1].difference_update(ms)
                drop_empty(k)
        elif r < 0.94:
            k = key(b"zset", 40)
            pairs = [(rng.randrange(-500, 500), b"z%d" % rng.randrange(60))
                     for _ in range(rng.randrange(1, 4))]
            cmd("ZADD", k, *[x for p in pairs for x in p])
            put(k, "zset", [(mem, sc) for sc, mem in pairs])
        elif r < 0.96:
            k = key(b"zset", 40)
            ms = [b"z%d" % rng.randrange(60) for _ in range(rng.randrange(1, 3))]
            cmd("ZREM", k, *ms)
            forget(k, ms)
        else:
            m.cur = 1 - m.cur
            cmd("SELECT", m.cur)

    i = 0
    while i < n:
        if rng.random() < 0.03:
            cmd("MULTI")
            k = rng.randrange(2, 6)
            for _ in range(k):
                one()
            cmd("EXEC")
            i += k + 2
        else:
            one()
            i += 1
    if not text:  # large values (several pages, > 64 KiB)
        for j in range(max(1, int(4 * scale + 0.5))):
            k, v = b"big:%d:%d" % (part, j), rng.randbytes(rng.randrange(70_000, 700_000))
            cmd("SET", k, v)
            m.d()[k] = ("string", bytearray(v))
        k = b"big:%d:0" % part
        v = rng.randbytes(rng.randrange(1, 90_000))
        cmd("APPEND", k, v)
        m.d()[k][1].extend(v)
    # Each part ends in database 0, as a new redis-cli connection starts.
    if m.cur != 0:
        m.cur = 0
        cmd("SELECT", 0)


def resp(c):
    return b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in c)


def textline(c):
    def q(x):
        return b'"' + b"".join(
            bytes([ch]) if 0x20 <= ch < 0x7f and ch not in b'"\\' else b"\\x%02x" % ch
            for ch in x) + b'"'
    return b" ".join(q(x) for x in c) + b"\n"


def canon(t, v):
    # One line per key: type, element count, sha256 of a canonical encoding.
    if t == "string":
        n, data = len(v), bytes(v)
    elif t == "list":
        n, data = len(v), b"".join(b"%d:%s," % (len(x), x) for x in v)
    elif t == "hash":
        n, data = len(v), b"".join(b"%d:%s=%d:%s," % (len(f), f, len(x), x) for f, x in sorted(v.items()))
    elif t == "set":
        n, data = len(v), b"".join(b"%d:%s," % (len(x), x) for x in sorted(v))
    else:  # zset: members in score order, ties by member
        items = sorted(v.items(), key=lambda p: (p[1], p[0]))
        n, data = len(v), b"".join(b"%d:%s=%d," % (len(x), x, s) for x, s in items)
    return "%s %d %s" % (t, n, hashlib.sha256(data).hexdigest()[:24])


def dump(m):
    lines = []
    for i, d in enumerate(m.db):
        lines.append("db%d keys %d" % (i, len(d)))
        for k in sorted(d):
            t, v = d[k]
            lines.append("db%d %s %s" % (i, k.decode(), canon(t, v)))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    what, part, scale = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    m = Model()
    out = sys.stdout.buffer
    for p in range(1, part + 1):
        cmds = []
        gen(p, scale, m, cmds)
        if what == "cmds" and p == part:
            f = textline if p % 2 == 0 else resp
            out.write(b"".join(f(c) for c in cmds))
    if what == "expect":
        out.write(dump(m).encode())
