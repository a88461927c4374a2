#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CLI says what happened (issue 13, "smaller"): `splitfs recover` on a
# read-only file system with a log pending fails and says why; records that
# fail their checksum are counted as skipped; `image up` with a size XFS
# refuses names the size, not a missing package; `image --help` prints the
# usage and an option where DIR belongs is refused.
. "$(dirname "$0")/../lib.sh"
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; rc=1; }

# --- image up: the size, not xfsprogs ---------------------------------------------
out=$("$SFS_CLI" image up /tmp/splitfs-tiny.$$ --size 64M 2>&1)
r=$?
rmdir /tmp/splitfs-tiny.$$ 2>/dev/null
[ $r -ne 0 ] && grep -q "too small for xfs" <<<"$out" && ! grep -q xfsprogs <<<"$out" &&
	ok "image up --size 64M: $out" || bad "image up --size 64M (exit $r): $out"

# --- image: --help prints the usage; an option where DIR belongs is refused ---------
# (`image up --help` once made an image mounted at ./--help.)
D=/tmp/splitfs-opt.$$
mkdir -p "$D"
out=$(cd "$D" && "$SFS_CLI" image up --help 2>&1)
r=$?
[ $r -eq 0 ] && grep -q "^usage: splitfs image up DIR" <<<"$out" && [ ! -e "$D/--help" ] &&
	ok "image up --help prints the usage" || bad "image up --help (exit $r): $out"
out=$(cd "$D" && "$SFS_CLI" image up --size 1G 2>&1)
r=$?
[ $r -eq 2 ] && grep -q "expected DIR" <<<"$out" && [ ! -e "$D/--size" ] &&
	ok "image up --size 1G (no DIR) is refused: $out" || bad "image up --size 1G (exit $r): $out"
for x in "$D/--help" "$D/--size"; do
	[ -d "$x" ] && { "$SFS_CLI" image down "$x" >/dev/null 2>&1; rmdir "$x"; }
done
rmdir "$D"

# --- a log pending on a read-only file system; a corrupt record ---------------------
M=/tmp/splitfs-cli.$$
trap '"$SFS_CLI" image down "$M" >/dev/null 2>&1; rmdir "$M" 2>/dev/null' EXIT
"$SFS_CLI" image up "$M" --size 320M --fs xfs >/dev/null || die "cannot make the image"
writer() { # a sync-mode writer killed after it wrote: its log stays, with records
	# (50 appends through one open: a file's first append is the kernel's
	# durable write and logs nothing, so a `>>` a record would leave none)
	SPLITFS_MODE=sync "$SFS_CLI" run --root "$M" -- /usr/bin/python3 -c \
		"import os; fd = os.open('$M/f', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
for i in range(1, 51): os.write(fd, b'record%d\\n' % i)
os.kill(os.getpid(), 9)"
}
writer
log=$(ls "$M/.splitfs" | grep -E '^log\.[0-9]' | head -1)
[ -n "$log" ] || die "the killed writer left no log"
mount -o remount,ro "$M" || die "cannot remount read-only"
out=$("$SFS_CLI" recover --root "$M" 2>&1)
r=$?
mount -o remount,rw "$M" || die "cannot remount read-write"
[ $r -ne 0 ] && grep -qi "read-only" <<<"$out" && ok "recover on a read-only file system fails: $out" ||
	bad "recover on a read-only file system with a log pending: exit $r: $out"
out=$("$SFS_CLI" recover --root "$M" 2>&1)
grep -q " 1 logs of dead processes" <<<"$out" && ok "the log recovered once writable" ||
	bad "after remount: $out"

writer
log=$(ls "$M/.splitfs" | grep -E '^log\.[0-9]' | head -1)
# A byte of the first record after the header (8192: format.h) flipped.
python3 - "$M/.splitfs/$log" <<'EOF' || die "cannot corrupt the log"
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(8192 + 70)
    b = f.read(1)
    f.seek(8192 + 70)
    f.write(bytes([b[0] ^ 0xff]))
EOF
out=$("$SFS_CLI" recover --root "$M" 2>&1)
n=$(sed -nE 's/.* ([0-9]+) skipped.*/\1/p' <<<"$out")
[ "${n:-0}" -ge 1 ] && ok "a corrupt record is counted as skipped ($n)" ||
	bad "a corrupt record was not reported: $out"

# --- image down: the census segments of every loop device the image was on ----------
# A remount from another loop device makes another segment (its name has
# the device); `image down` once removed only the last one's. A root below
# the image's top (`run --root DIR/sub`, as the crash suite's) has its own
# .splitfs, so its own segment: it went unremoved, two per make test.
census_of() { ls /dev/shm | grep -E "^splitfs-census\.$(id -u)\.$(stat -c %d "$M")\." ; }
# A command that names a path under the root: the library starts there
# (and makes the segment) only then (src/init.c).
"$SFS_CLI" run --root "$M" -- stat "$M" >/dev/null
seg1=$(census_of)
img=$(sed -n 's/^backing=//p' "$M/.splitfs/image")
hold=$(mktemp /dev/shm/splitfs-cli-hold.XXXXXX)
truncate -s 1M "$hold"
umount "$M" || die "cannot unmount $M"
loop=$(losetup -f --show "$hold") # the freed loop device stays taken
mount -o loop "$img" "$M" || die "cannot mount $img again"
"$SFS_CLI" run --root "$M" -- stat "$M" >/dev/null
seg2=$(census_of)
mkdir -p "$M/sub"
"$SFS_CLI" run --root "$M/sub" -- stat "$M/sub" >/dev/null
seg3=$(census_of | grep -v "^$seg2\$")
# A copy of the image mounted elsewhere has the same tail, another device.
copy=splitfs-census.4242.$(stat -c %d /dev/shm).${seg1#*.*.*.}
touch "/dev/shm/$copy"
"$SFS_CLI" image down "$M" >/dev/null
losetup -d "$loop"
rm -f "$hold"
if [ -n "$seg1" ] && [ -n "$seg2" ] && [ -n "$seg3" ] && [ "$seg1" != "$seg2" ] &&
	[ ! -e "/dev/shm/$seg1" ] && [ ! -e "/dev/shm/$seg2" ] && [ ! -e "/dev/shm/$seg3" ] &&
	[ -e "/dev/shm/$copy" ]; then
	ok "image down removed the segments of both devices and of a root below, kept a mounted device's"
else
	bad "census segments after image down: $seg1 / $seg2 / $seg3 (want all gone), $copy (want kept)"
fi
rm -f "/dev/shm/$copy"
exit $rc
