#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# File I/O through Python's APIs for tests/suites/apps.sh:  pyio.py DIR
# Writes files with text and binary open().write, appends in a loop,
# os.write/os.pwrite, seek + overwrite, truncate (grow and shrink),
# shutil.copyfile (sendfile), os.replace, then reads everything back (read,
# readline iteration, os.pread, mmap) and prints checksums. Deterministic.
import hashlib
import mmap
import os
import random
import shutil
import sys

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
rng = random.Random(99)


def p(name):
    return os.path.join(d, name)


def h(b):
    return hashlib.sha256(b).hexdigest()[:16]


def say(*a):
    print(*a, flush=True)


# 1. Text mode, line buffered writes of many lines.
with open(p("text.txt"), "w", encoding="utf-8", newline="\n") as f:
    for i in range(20000):
        f.write("line %06d %s ünïcödé\n" % (i, "x" * (i % 50)))
# 2. Binary write in odd-sized chunks, bigger than the map size.
blob = rng.randbytes(5 * 1024 * 1024 + 123)
with open(p("blob.bin"), "wb") as f:
    pos = 0
    while pos < len(blob):
        n = rng.choice([1, 7, 4096, 65536, 1 << 20, 300001])
        f.write(blob[pos:pos + n])
        pos += n
# 3. Appends in a loop, reopening each time (O_APPEND).
for i in range(300):
    with open(p("append.log"), "a") as f:
        f.write("append %d %s\n" % (i, "y" * rng.randrange(0, 200)))
# 4. os.write / os.pwrite on a raw fd, with holes.
fd = os.open(p("raw.bin"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"A" * 10000)
os.pwrite(fd, b"B" * 5000, 8000)          # overlaps the end, extends
os.pwrite(fd, b"C" * 100, 3 * 1024 * 1024)  # far past the end: a hole
os.write(fd, b"D" * 10)                   # file offset is still 10000
os.lseek(fd, 0, os.SEEK_END)
os.write(fd, b"E" * 4096)
os.fsync(fd)
say("raw.bin pread", h(os.pread(fd, 20000, 0)), h(os.pread(fd, 4096, 3 * 1024 * 1024 - 10)))
os.close(fd)
# 5. Seek + overwrite in r+b, and reads in between.
shutil.copyfile(p("blob.bin"), p("rw.bin"))
with open(p("rw.bin"), "r+b") as f:
    for i in range(200):
        off = rng.randrange(0, len(blob) + 10000)
        f.seek(off)
        data = rng.randbytes(rng.randrange(1, 20000))
        f.write(data)
        f.seek(off)
        if f.read(len(data)) != data:
            say("rw.bin: read-after-write mismatch at", off)
    f.flush()
    os.fsync(f.fileno())
# 6. Truncate: shrink, grow (zeros), shrink to 0 and write again.
shutil.copyfile(p("blob.bin"), p("trunc.bin"))
os.truncate(p("trunc.bin"), 1_000_001)
with open(p("trunc.bin"), "r+b") as f:
    f.truncate(3_000_000)
    f.seek(2_000_000)
    f.write(b"middle")
    say("trunc.bin grown", h(f.read()))
shutil.copyfile(p("text.txt"), p("trunc0.txt"))
with open(p("trunc0.txt"), "r+") as f:
    f.truncate(0)
    f.write("short\n")
# 7. shutil.copyfile (sendfile on Linux) and copy2, then replace atomically.
shutil.copyfile(p("blob.bin"), p("copy.bin"))
shutil.copy2(p("text.txt"), p("copy.txt"))
with open(p("new.tmp"), "wb") as f:
    f.write(b"replacement " * 1000)
    f.flush()
    os.fsync(f.fileno())
os.replace(p("new.tmp"), p("copy.txt"))
os.rename(p("append.log"), p("appended.log"))
# 8. Many small files, written and some removed.
for i in range(200):
    with open(p("small-%03d" % i), "wb") as f:
        f.write(rng.randbytes(i * 37))
for i in range(0, 200, 3):
    os.unlink(p("small-%03d" % i))
# 9. Read everything back: whole reads, line iteration, mmap.
for name in sorted(os.listdir(d)):
    full = p(name)
    size = os.path.getsize(full)
    with open(full, "rb") as f:
        data = f.read()
    line = ""
    if name.endswith((".txt", ".log")):
        with open(full, encoding="utf-8") as f:
            lines = sum(1 for _ in f)
        line = "lines=%d" % lines
    mm = ""
    if size:
        with open(full, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            mm = h(m[:])
            if m[:] != data:
                mm += " MMAP-DIFFERS"
    say(name, size, h(data), mm, line)
# 10. mmap write (shared) into an existing file, then read with read().
shutil.copyfile(p("blob.bin"), p("mmapw.bin"))
with open(p("mmapw.bin"), "r+b") as f, mmap.mmap(f.fileno(), 0) as m:
    m[100:200] = b"M" * 100
    m[len(m) - 50:] = b"N" * 50
    m.flush()
with open(p("mmapw.bin"), "rb") as f:
    say("mmapw.bin", h(f.read()))
