#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Deterministic file tree for the application suites (tests/suites/apps-*.sh).
#
#   mktree.py create DIR   a few hundred files of varied sizes (empty, small,
#                          page-sized, > 2 MiB, one > 6 MiB), nested
#                          directories, a symlink
#   mktree.py modify DIR N modification round N (1, 2, ...): overwrite parts
#                          of some files, append to others, truncate, delete,
#                          add new files; changed files get the round's fixed
#                          mtime so that rsync sees every change (.git is
#                          left alone)
import os
import random
import sys

MTIME0 = 1_600_000_000  # every file's mtime after create
SIZES = [0, 1, 17, 511, 512, 4095, 4096, 4097, 8192, 65536, 100_000]


def content(rng, n):
    # Half random bytes, half text-like lines: compressible and not.
    if rng.random() < 0.5:
        return rng.randbytes(n)
    words = [b"split", b"fs", b"staging", b"relink", b"xfs", b"mmap", b"\n"]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) + b" "
    return bytes(out[:n])


def create(root):
    rng = random.Random(20240101)
    os.makedirs(root, exist_ok=True)
    dirs = [""]
    for i in range(24):
        parent = rng.choice(dirs)
        d = os.path.join(parent, "d%02d" % i)
        os.makedirs(os.path.join(root, d), exist_ok=True)
        dirs.append(d)
    files = []
    for i in range(300):
        d = rng.choice(dirs)
        if i < len(SIZES):
            n = SIZES[i]
        elif i % 97 == 0:
            n = 2 * 1024 * 1024 + rng.randrange(1, 1_500_000)  # > 2 MiB
            if i == 291:
                # Past 4.25 MiB: rsync and tar read it in more than 16
                # reads of 256 KiB, so that the library serves a file that
                # was opened only to be read (src/fs/fdtable.h).
                n += 4 * 1024 * 1024
        elif i % 5 == 0:
            n = 0
        else:
            n = int(rng.expovariate(1 / 12000))
        p = os.path.join(d, "f%03d.%s" % (i, rng.choice(["txt", "bin", "dat"])))
        with open(os.path.join(root, p), "wb") as f:
            f.write(content(rng, n))
        files.append(p)
    os.symlink(files[42], os.path.join(root, "link-to-f042"))
    os.symlink("d00", os.path.join(root, "link-to-dir"))
    os.chmod(os.path.join(root, files[7]), 0o755)
    stamp(root, MTIME0)


def modify(root, rnd):
    rng = random.Random(1000 + rnd)
    files = sorted(
        os.path.relpath(os.path.join(dp, f), root)
        for dp, _, fs in walk(root)
        for f in fs
        if not os.path.islink(os.path.join(dp, f))
    )
    t = MTIME0 + 1000 * rnd
    touched = []
    for p in rng.sample(files, 40):
        full = os.path.join(root, p)
        touched.append(full)
        size = os.path.getsize(full)
        op = rng.choice(["overwrite", "append", "truncate", "delete", "rewrite"])
        if op == "overwrite" and size > 0:
            with open(full, "r+b") as f:
                f.seek(rng.randrange(size))
                f.write(rng.randbytes(rng.randrange(1, 5000)))
        elif op == "append":
            with open(full, "ab") as f:
                f.write(content(rng, rng.randrange(1, 20000)))
        elif op == "truncate":
            os.truncate(full, size // 2)
        elif op == "delete":
            os.unlink(full)
        else:
            with open(full, "wb") as f:
                f.write(content(rng, rng.randrange(0, 30000)))
    for i in range(10):
        with open(os.path.join(root, "new-r%d-%02d.txt" % (rnd, i)), "wb") as f:
            f.write(content(rng, rng.randrange(0, 50000)))
        touched.append(f.name)
    # Changed files get this round's mtime, unchanged ones keep theirs.
    for p in touched:
        if os.path.exists(p):
            os.utime(p, (t, t))
    for dp, ds, _ in walk(root):
        for n in ds:
            os.utime(os.path.join(dp, n), (t, t))
    os.utime(root, (t, t))


def walk(root):
    # os.walk without .git (modify also runs on a git work tree).
    for dp, ds, fs in os.walk(root):
        ds[:] = sorted(x for x in ds if x != ".git")
        yield dp, ds, fs


def stamp(root, t=MTIME0):
    for dp, ds, fs in os.walk(root):
        for n in fs + ds:
            os.utime(os.path.join(dp, n), (t, t), follow_symlinks=False)
    os.utime(root, (t, t))


if __name__ == "__main__":
    if sys.argv[1] == "create":
        create(sys.argv[2])
    elif sys.argv[1] == "modify":
        modify(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("usage: mktree.py create DIR | modify DIR N")
