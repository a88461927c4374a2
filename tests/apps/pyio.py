#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# File I/O through Python's APIs for tests/suites/apps-python3.sh:  pyio.py DIR
# Deterministic; every output line starts with its section's name, and
# section S writes its files under DIR/S, so that the suite compares each
# section on its own:
#   io       text and binary open().write, appends in a loop, os.write and
#            os.pwrite, seek + overwrite, truncate (grow and shrink),
#            shutil.copyfile (sendfile), os.replace, then everything read
#            back (read, line iteration, os.pread, mmap) with checksums
#   mmap     shared mmap writes, and a mapping made while writes are pending
#   utime    timestamps set (futimens, utimensat by path) after writes,
#            before close, as tar -x and cp -p do
#   rewrite  a file truncated by open(O_TRUNC) and rewritten while an older
#            descriptor of this process still has unflushed writes
#   share    a second process truncates (open "w") and appends to a file
#            that the first still has open with writes it has not closed
import hashlib
import mmap
import os
import random
import shutil
import subprocess
import sys

top = sys.argv[1]
rng = random.Random(99)
d = None
section = None


def start(name):
    global d, section
    section = name
    d = os.path.join(top, name)
    os.makedirs(d, exist_ok=True)


def p(name):
    return os.path.join(d, name)


def h(b):
    return hashlib.sha256(b).hexdigest()[:16]


def say(*a):
    print(section, *a, flush=True)


def io():
    start("io")
    # Text mode, many lines.
    with open(p("text.txt"), "w", encoding="utf-8", newline="\n") as f:
        for i in range(20000):
            f.write("line %06d %s ünïcödé\n" % (i, "x" * (i % 50)))
    # Binary writes in odd-sized chunks, bigger than the map size.
    blob = rng.randbytes(5 * 1024 * 1024 + 123)
    with open(p("blob.bin"), "wb") as f:
        pos = 0
        while pos < len(blob):
            n = rng.choice([1, 7, 4096, 65536, 1 << 20, 300001])
            f.write(blob[pos:pos + n])
            pos += n
    # Appends in a loop, reopening each time (O_APPEND).
    for i in range(300):
        with open(p("append.log"), "a") as f:
            f.write("append %d %s\n" % (i, "y" * rng.randrange(0, 200)))
    # os.write / os.pwrite on a raw fd, with a hole.
    fd = os.open(p("raw.bin"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"A" * 10000)
    os.pwrite(fd, b"B" * 5000, 8000)            # overlaps the end, extends
    os.pwrite(fd, b"C" * 100, 3 * 1024 * 1024)  # far past the end: a hole
    os.write(fd, b"D" * 10)                     # the offset is still 10000
    os.lseek(fd, 0, os.SEEK_END)
    os.write(fd, b"E" * 4096)
    os.fsync(fd)
    say("raw.bin pread", h(os.pread(fd, 20000, 0)), h(os.pread(fd, 4096, 3 * 1024 * 1024 - 10)))
    os.close(fd)
    # Seek + overwrite in r+b, reading back in between.
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
    # Truncate: shrink, grow (zeros), shrink to 0 and write again.
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
    # shutil.copyfile (sendfile on Linux) and copy2, then an atomic replace.
    shutil.copyfile(p("blob.bin"), p("copy.bin"))
    shutil.copy2(p("text.txt"), p("copy.txt"))
    with open(p("new.tmp"), "wb") as f:
        f.write(b"replacement " * 1000)
        f.flush()
        os.fsync(f.fileno())
    os.replace(p("new.tmp"), p("copy.txt"))
    os.rename(p("append.log"), p("appended.log"))
    # Many small files, some removed.
    for i in range(200):
        with open(p("small-%03d" % i), "wb") as f:
            f.write(rng.randbytes(i * 37))
    for i in range(0, 200, 3):
        os.unlink(p("small-%03d" % i))
    # Everything read back: whole reads, line iteration, mmap.
    for name in sorted(os.listdir(d)):
        full = p(name)
        size = os.path.getsize(full)
        with open(full, "rb") as f:
            data = f.read()
        line = ""
        if name.endswith((".txt", ".log")):
            with open(full, encoding="utf-8") as f:
                line = "lines=%d" % sum(1 for _ in f)
        mm = ""
        if size:
            with open(full, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                mm = h(m[:]) + ("" if m[:] == data else " MMAP-DIFFERS")
        say(name, size, h(data), mm, line)


def mmaps():
    start("mmap")
    blob = random.Random(5).randbytes(3 * 1024 * 1024 + 77)
    with open(p("src.bin"), "wb") as f:
        f.write(blob)
    # Shared mmap writes into an existing file, then read().
    shutil.copyfile(p("src.bin"), p("mmapw.bin"))
    with open(p("mmapw.bin"), "r+b") as f, mmap.mmap(f.fileno(), 0) as m:
        m[100:200] = b"M" * 100
        m[len(m) - 50:] = b"N" * 50
        m.flush()
    with open(p("mmapw.bin"), "rb") as f:
        say("mmapw.bin", h(f.read()))
    # A mapping made while writes are pending, writes through both paths.
    fd = os.open(p("pending.bin"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, blob[:200000])
    with mmap.mmap(fd, 0) as m:
        say("map of pending writes", len(m), h(m[:]) == h(blob[:200000]))
        m[0:5] = b"HELLO"
        say("pread after map write", os.pread(fd, 5, 0))
        os.pwrite(fd, b"WORLD", 5)
        say("map after pwrite", m[5:10])
    os.close(fd)
    with open(p("pending.bin"), "rb") as f:
        say("pending.bin", h(f.read()))


def utime():
    start("utime")
    # futimens on the descriptor after writing, then close (tar -x, cp -p).
    for i, n in enumerate([1, 4096, 100000, 3 * 1024 * 1024]):
        name = p("futimens-%d" % n)
        with open(name, "wb") as f:
            f.write(random.Random(i).randbytes(n))
            f.flush()
            os.utime(f.fileno(), ns=(1_000_000_000 * i, 1_234_567_890_123_456_789))
        say(os.path.basename(name), os.stat(name).st_mtime_ns)
    # utimensat by path while the file is still open with writes pending.
    fd = os.open(p("utime-path"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"pending " * 1000)
    os.utime(p("utime-path"), ns=(5, 1_000_000_000_000_000_000))
    os.close(fd)
    say("utime-path", os.stat(p("utime-path")).st_mtime_ns)


def rewrite():
    start("rewrite")
    # An older descriptor wrote (unflushed), the file is reopened with
    # O_TRUNC and rewritten shorter, then both are closed (either order).
    for order in ("old-first", "new-first"):
        name = p(order)
        old = os.open(name, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(old, b"0123456789" * 1000)
        with open(name, "w") as f:  # the same as a second open("w")
            say(order, "size after reopen", os.fstat(old).st_size)
            f.write("new\n")
            f.flush()
            if order == "old-first":
                os.close(old)
        if order == "new-first":
            os.close(old)
        with open(name, "rb") as f:
            data = f.read()
        say(order, "content", len(data), h(data), data[:16])


def share():
    start("share")
    name = p("status")
    if len(sys.argv) > 2:  # the second process: wait, truncate and write, signal
        rd, wr = int(sys.argv[3]), int(sys.argv[4])
        os.read(rd, 1)
        with open(name, "w") as f:
            f.write("reset by second process\n")
        os.write(wr, b"x")
        return
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    child = subprocess.Popen([sys.executable, __file__, top, "child", str(r1), str(w2)],
                             pass_fds=(r1, w2))
    # Written after the child started: nothing forces them out at spawn.
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for i in range(100):
        os.write(fd, b"first process line %d\n" % i)
    os.write(w1, b"x")  # the child truncates the file and writes
    os.read(r2, 1)
    for i in range(3):
        os.write(fd, b"first process after reset %d\n" % i)
    os.close(fd)
    say("child exit", child.wait())
    with open(name, "rb") as f:
        data = f.read()
    say("status", len(data), data.count(b"\n"), data[:40])


if len(sys.argv) > 2:
    share()
    sys.exit(0)
io()
mmaps()
utime()
rewrite()
share()
