#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Crash consistency on the host (tests/crash/README.md): first the checker
# itself (a native run passes; a zeroed byte, lost fsynced records, a page
# of the wrong slot, a file grown with zeros are caught), then per mode of
# $SFS_MODES and for a strict and a POSIX process at once: CRASH_POINTS
# (default 120: each of the 8 workloads 15 times) SIGKILL points, and
# CRASH_POWER_POINTS (default 60) points where the XFS image is shut down
# (page cache lost), each followed by `splitfs recover` and the mode's
# checks. About 0.4 s a point. Knobs: CRASH_POINTS=2000
# CRASH_POWER_POINTS=1000 for a long run. Power cuts at any instant, in the
# lab guest: tests/suites/powercut.sh. Before the power points, "down": a
# power cut right after each namespace change of sync and strict mode;
# "logfail": a file whose fdatasync fails while the log holds its writes
# (both on the power points' image); "wberr": a real writeback error, after
# which the kernel's next fdatasync reports success (an image of its own;
# CRASH_POWER_POINTS=0 leaves these three out).
# Tests (tests/run.sh crash TEST...): checker, biglog, kill, down, logfail,
# wberr, power.
. "$(dirname "$0")/../lib.sh"
sfs_tests checker biglog kill down logfail wberr power
HERE=$(cd "$(dirname "$0")/../crash" && pwd)
TOOL=$SFS_BUILD/crash/crashtool
[ -x "$TOOL" ] || die "$TOOL not built (make tests)"

# --- the checker catches what it must ---------------------------------------
if wanted checker; then
d=$WORK/selfcheck
mkdir -p "$d"
ack=$(mktemp /tmp/sfs-selfcheck.XXXXXX)
# run WL SECONDS: the workload natively, killed after SECONDS.
run_native() {
	rm -rf "${d:?}"/* "$ack"
	"$TOOL" run "$1" "$d" "$ack" 7 &
	local pid=$!
	sleep "$2"
	kill -9 $pid
	wait $pid 2>/dev/null
}
expect() { # expect pass|fail WHAT CHECK-ARGS...
	local want=$1 what=$2
	shift 2
	"$TOOL" check "$@" >"$WORK/selfcheck.out" 2>&1
	local r=$?
	if { [ "$want" = pass ] && [ $r -eq 0 ]; } || { [ "$want" = fail ] && [ $r -eq 1 ]; }; then
		echo "ok   checker: $what"
	else
		echo "FAIL checker: $what: exit $r, wanted $want"
		sed 's/^/    /' "$WORK/selfcheck.out"
		exit 1
	fi
}
run_native append 0.3
expect pass "native appender passes" append "$d" "$ack" sync kill
# The kernel keeps every write through a kill, fsynced or not: the check
# POSIX mode's staged appends must pass holds there.
run_native nosync 0.3
expect pass "native appender that never fsyncs passes (posix, kill: every write kept)" \
	nosync "$d" "$ack" posix kill
run_native append 0.3
size=$(stat -c %s "$d/append.dat")
# A byte that is not 0 already (a record header holds zeros: seen once in
# the lab, where the middle byte happened to be one, and the check passed).
off=$((size / 2))
while [ "$(od -An -tu1 -j "$off" -N1 "$d/append.dat" | tr -d ' ')" = 0 ]; do off=$((off + 1)); done
printf '\x00' | dd of="$d/append.dat" bs=1 seek="$off" conv=notrunc status=none
expect fail "a zeroed byte in the appender's file" append "$d" "$ack" posix kill
truncate -s $((size / 3)) "$d/append.dat"
expect fail "fsynced records cut off" append "$d" "$ack" posix kill
run_native overwrite 0.3
# Sync, not strict: the kernel cuts a killed write at a page boundary.
expect pass "native overwriter passes" overwrite "$d" "$ack" sync kill
# Page 1 of slot 5 replaced by page 1 of slot 5 at another version: take it
# from a copy made while the workload still ran is not possible here, so
# write page 0 of slot 6 over it instead (an intact page of the wrong slot).
dd if="$d/over.dat" of="$d/over.dat" bs=4096 skip=$((6 * 4)) seek=$((5 * 4 + 1)) count=1 conv=notrunc status=none
expect fail "a page of the wrong slot" overwrite "$d" "$ack" sync kill
run_native mixed 0.3
# Sync again: strict mode's whole-or-nothing is the library's (seen once
# in CI: an append in flight left at 65536 of its bytes).
expect pass "native mixed workload passes" mixed "$d" "$ack" sync kill
for f in "$d"/n*; do
	[ -s "$f" ] || continue
	truncate -s $(($(stat -c %s "$f") + 4096)) "$f"
	break
done
expect fail "a file grown with zeros" mixed "$d" "$ack" sync kill
rm -rf "$d" "$ack"
fi

# --- a full 128 MiB log recovers -------------------------------------------------
# A sync-mode appender fills most of a 128 MiB log (no checkpoint yet), is
# killed, and `splitfs recover` replays all of it; the appender's check
# must pass. The time is reported (not asserted). Seed 12: no forked
# child sharing the file (that would leave the file to the kernel, unlogged).
# CRASH_BIGLOG=0 leaves it out (the lab's emulated CPU).
if [ "${CRASH_BIGLOG:-1}" = 1 ] && wanted biglog; then
big=$WORK/biglog
bigack=$(mktemp /tmp/sfs-biglog.XXXXXX) # off the image: not logged itself
mkdir -p "$big"
SPLITFS_MODE=sync SPLITFS_LOG_SIZE=128M CRASH_APPEND_CAP=256 \
	"$SFS_CLI" run --root "$WORK" -- "$TOOL" run append "$big" "$bigack" 12 &
pid=$!
# The log holds each record's 64-byte entry and its payload padded to 64:
# stop at about 100 MiB of file data (~120 MiB of log), before it fills.
for ((t = 0; t < 1200; t++)); do
	[ "$(stat -c %s "$big/append.dat" 2>/dev/null || echo 0)" -ge $((100 << 20)) ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
out=$("$SFS_CLI" recover --root "$WORK") || die "recovery of the 128 MiB log failed: $out"
echo "128 MiB log: $out"
grep -q " 1 logs of dead processes" <<<"$out" || die "the 128 MiB log was not recovered"
"$TOOL" check append "$big" "$bigack" sync kill || die "the 128 MiB log's appender lost data"
rm -rf "$big" "$bigack"
fi

# --- the crash points -----------------------------------------------------------
export SFS_BUILD SFS_CLI
rc=0
# Process kills, each mode, and a strict and a POSIX process at once.
if wanted kill; then
	CRASH_MODES="$MODES strict+posix" CRASH_OUT=${SFS_TEST_OUT:-/tmp}/crash-failures/kill \
		"$HERE/run.sh" "$WORK" "${CRASH_POINTS:-120}" kill || rc=1
fi
# The page cache lost too (XFS shut down, see run.sh), on an image of its own.
PW=/tmp/splitfs-crash-power.$$
WB=/tmp/splitfs-crash-wberr.$$ # wberr's image and the tmpfs it lies in
release_images() {
	if [ -d "$PW" ]; then
		"$SFS_CLI" image down "$PW" >/dev/null 2>&1
		rmdir "$PW" 2>/dev/null
	fi
	if [ -d "$WB" ]; then
		umount "$WB/fs" 2>/dev/null
		umount "$WB/media" 2>/dev/null
		rm -rf "$WB"
	fi
}
trap release_images EXIT
# power_image: makes it once; PW_IMG is its backing file.
power_image() {
	[ -d "$PW/.splitfs" ] && return 0
	"$SFS_CLI" image up "$PW" --size 1G --fs xfs >/dev/null || die "cannot make the power-cut image"
	PW_IMG=$(sed -n 's/^backing=//p' "$PW/.splitfs/image")
}
# remount: mounts the shut-down image again (XFS replays its log).
remount() {
	local t
	for ((t = 0; t < 50; t++)); do
		umount "$PW" 2>/dev/null && break
		sleep 0.1
	done
	mount -o loop "$PW_IMG" "$PW" || die "cannot mount $PW_IMG again"
}
# under_shim NAME CODE ARGS...: python3 -c CODE ARGS under the library (the
# caller's SPLITFS_MODE), with tests/shim/NAME.so preloaded after it.
under_shim() {
	local shim=$SFS_BUILD/shim/$1.so
	[ -f "$shim" ] || die "$shim not built (make tests)"
	shift
	"$SFS_CLI" run --root "$PW" -- sh -c \
		'LD_PRELOAD="$LD_PRELOAD:$0" exec /usr/bin/python3 -c "$@"' "$shim" "$@"
}

# --- a power cut right after a namespace change ------------------------------------
# In sync and strict modes a rename, unlink, mkdir, create or truncating
# open returns once the change is durable, or fails. tests/shim/downafter.so
# shuts the file system down (log not flushed) the moment the kernel's call
# returns, so the change is in memory only and the library's sync after it
# meets EIO: the call must fail, or the change must be there after the
# file system is mounted again. (Seen in CI as a rename acknowledged and
# lost, when a power point's shutdown landed between a rename and the
# library's directory fsync, which took EIO for "nothing to sync".)
# Like the power points, it needs an image of its own: CRASH_POWER_POINTS=0
# leaves it out (the lab guest, which cannot mount one; powercut-pmem.sh).
if wanted down && [ "${CRASH_POWER_POINTS:-60}" -gt 0 ]; then
	power_image
	# One call, its outcome printed at once ("ok" or the errno's text).
	probe='import os, sys
op, d = sys.argv[1], sys.argv[2]
n = d + "/n"
try:
    if op == "rename":
        os.rename(d + "/t", n)
    elif op == "unlink":
        os.unlink(n)
    elif op == "mkdir":
        os.mkdir(n)
    elif op == "create":
        os.open(n, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    elif op == "truncate":
        os.open(n, os.O_WRONLY | os.O_TRUNC)
    print("ok", flush=True)
except OSError as e:
    print(e.strerror, flush=True)
os._exit(0)'
	for mode in $MODES; do
		[ "$mode" = posix ] && continue # no promise before fsync
		for op in rename unlink mkdir create truncate; do
			dd=$PW/down
			rm -rf "$dd" && mkdir "$dd"
			[ "$op" = create ] || [ "$op" = mkdir ] || echo old >"$dd/n"
			[ "$op" = rename ] && echo new >"$dd/t"
			sync -f "$dd"
			got=$(SPLITFS_MODE=$mode SFS_SHIM_DOWN_NAME=n SFS_SHIM_DOWN_FS=$PW \
				under_shim downafter "$probe" "$op" "$dd" 2>&1)
			# The shim must have cut: the file system fails from then on.
			stat "$dd" >/dev/null 2>&1 && die "down $mode $op: the file system was not shut down ($got)"
			remount
			"$SFS_CLI" recover --root "$PW" >/dev/null || die "down $mode $op: recovery failed"
			case $op in
			rename) there=$([ "$(cat "$dd/n" 2>/dev/null)" = new ] && [ ! -e "$dd/t" ] && echo y) ;;
			unlink) there=$([ ! -e "$dd/n" ] && echo y) ;;
			mkdir) there=$([ -d "$dd/n" ] && echo y) ;;
			create) there=$([ -f "$dd/n" ] && echo y) ;;
			truncate) there=$([ -f "$dd/n" ] && [ ! -s "$dd/n" ] && echo y) ;;
			esac
			if [ "$got" = ok ] && [ -z "$there" ]; then
				echo "FAIL down: $op in $mode mode returned and its change is lost after the power cut"
				rc=1
			else
				echo "ok   down: $op in $mode mode: ${got:-no output}, change ${there:+there}${there:-lost}"
			fi
		done
	done
	rm -rf "$PW/down"
fi

# --- a file whose writeback fails while the log holds its writes ---------------
# Sync and strict modes write a small write to the operation log and the
# page cache; a checkpoint (the log full) fdatasyncs the files, then kills
# their records. tests/shim/syncfail.so fails every fdatasync and fsync of
# file f with EIO, syncing nothing (its writeback met a bad disk): the
# records are then the only durable copy, and no checkpoint may kill them.
# The appender writes 4000-byte records through a 1 MiB log until a write
# fails; the file system is then cut (log not flushed) and mounted again,
# and every write that returned must be in f after `splitfs recover`.
if wanted logfail && [ "${CRASH_POWER_POINTS:-60}" -gt 0 ]; then
	power_image
	appender='import os, sys
fd = os.open(sys.argv[1] + "/f", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
n = 0
for i in range(2000):
    try:
        os.write(fd, bytes([i % 251 + 1]) * 4000)
    except OSError as e:
        print(n, e.strerror, flush=True)
        os._exit(0)
    n += 1
print(n, "none failed", flush=True)
os._exit(0)'
	for mode in $MODES; do
		[ "$mode" = posix ] && continue # no write is durable before fsync
		dd=$PW/logfail
		rm -rf "$dd" && mkdir "$dd" && sync -f "$dd"
		got=$(SPLITFS_MODE=$mode SPLITFS_LOG_SIZE=1M SFS_SHIM_FAIL_NAME=f \
			under_shim syncfail "$appender" "$dd" 2>"$WORK/logfail.err")
		n=${got%% *}
		[[ "$n" =~ ^[0-9]+$ ]] || die "logfail $mode: the appender did not run: $got $(cat "$WORK/logfail.err")"
		xfs_io -x -c "shutdown" "$PW" || die "logfail $mode: cannot shut $PW down"
		remount
		"$SFS_CLI" recover --root "$PW" >/dev/null || die "logfail $mode: recovery failed"
		bad=$(/usr/bin/python3 -c 'import sys
n, data = int(sys.argv[2]), open(sys.argv[1] + "/f", "rb").read()
for i in range(n):
    if data[i * 4000:(i + 1) * 4000] != bytes([i % 251 + 1]) * 4000:
        print("write", i, "of", n, "lost; the file has", len(data), "bytes"); break' "$dd" "$n")
		if [ -n "$bad" ]; then
			echo "FAIL logfail: $mode mode: $bad (the appender: $got)"
			rc=1
		else
			echo "ok   logfail: $mode mode: $got; every write that returned is there"
		fi
	done
	rm -rf "$PW/logfail"
fi

# --- a real writeback error, then a sync that reports none ----------------------
# The kernel reports a writeback error to a file's fdatasync once: the
# next one returns 0, although the pages that failed never reached the
# disk (they stay in the page cache, clean). So a checkpoint after a failed
# one would kill the records that are the only durable copy of those
# writes. Made real here, not by a shim: an XFS image whose backing file
# lies in a small tmpfs of its own; a file that fills that tmpfs makes
# every write of a block not written before fail in the loop device
# (ENOSPC), as a bad disk would, while the log and XFS's metadata, written
# already, stay writable. (The kernel alone, the same pattern: the
# fdatasync after the fill fails, the next returns 0, and the failed
# blocks read as zeros from the media.) The appender (1 MiB log) writes 4000-byte
# records to f, fills the tmpfs, writes until a write fails, then (space
# back) 600 more; cut, mount again, recover: every write that returned
# must be in f.
if wanted wberr && [ "${CRASH_POWER_POINTS:-60}" -gt 0 ]; then
	mkdir -p "$WB/media" "$WB/fs"
	mount -t tmpfs -o size=400m tmpfs "$WB/media" || die "wberr: cannot mount a tmpfs"
	# A fresh image for each mode: the blocks an earlier run wrote are in
	# the tmpfs, and writing them again would not fail.
	wb_image() {
		umount "$WB/fs" 2>/dev/null
		rm -f "$WB/media/img" && truncate -s 320m "$WB/media/img" &&
			mkfs.xfs -q -f "$WB/media/img" && mount -o loop "$WB/media/img" "$WB/fs" ||
			die "wberr: cannot make the image"
		# One page a request: the loop device takes a short write into
		# its backing file (the tmpfs filled part-way through a request)
		# for a whole one, and the rest of the request would be lost
		# with no error.
		local dev
		dev=$(losetup -j "$WB/media/img" | cut -d: -f1)
		echo 4 >"/sys/block/${dev#/dev/}/queue/max_sectors_kb" ||
			die "wberr: cannot limit $dev's requests to a page"
	}
	appender='import os, sys
d, fill = sys.argv[1], sys.argv[2]
fd = os.open(d + "/f", os.O_WRONLY | os.O_CREAT, 0o644)
acked, failed = [], None
def write(i):
    try:
        os.pwrite(fd, bytes([i % 251 + 1]) * 4000, i * 4000)
        acked.append(i)
    except OSError as e:
        return e.strerror
write(0)
os.sync()  # the file, the log and their metadata on the media before it fills
for i in range(1, 100):
    write(i)
ffd = os.open(fill, os.O_WRONLY | os.O_CREAT, 0o600)
st = os.statvfs(os.path.dirname(fill))
os.posix_fallocate(ffd, 0, st.f_bavail * st.f_frsize)
for i in range(100, 1000):
    failed = write(i)
    if failed:
        break
os.close(ffd)
os.unlink(fill)
for i in range(i + 1, i + 601):
    write(i)
print(len(acked), "writes returned;", "one failed:", failed, flush=True)
with open(d + "/acked", "w") as f:
    f.write(" ".join(map(str, acked)))
os._exit(0)'
	for mode in $MODES; do
		[ "$mode" = posix ] && continue # no write is durable before fsync
		wb_image
		dd=$WB/fs/wberr
		mkdir "$dd" && sync -f "$dd"
		got=$(SPLITFS_MODE=$mode SPLITFS_LOG_SIZE=1M "$SFS_CLI" run --root "$WB/fs" -- \
			/usr/bin/python3 -c "$appender" "$dd" "$WB/media/fill" 2>"$WORK/wberr.err")
		[ -s "$dd/acked" ] || die "wberr $mode: the appender did not finish: $got $(cat "$WORK/wberr.err")"
		case $got in *"one failed: None") die "wberr $mode: no write failed while the media was full: $got" ;; esac
		xfs_io -x -c "shutdown -f" "$WB/fs" || die "wberr $mode: cannot shut the image down"
		for ((t = 0; t < 50; t++)); do
			umount "$WB/fs" 2>/dev/null && break
			sleep 0.1
		done
		mount -o loop "$WB/media/img" "$WB/fs" || die "wberr $mode: cannot mount the image again"
		"$SFS_CLI" recover --root "$WB/fs" >/dev/null || die "wberr $mode: recovery failed"
		bad=$(/usr/bin/python3 -c 'import sys
d = sys.argv[1]
data = open(d + "/f", "rb").read()
for i in map(int, open(d + "/acked").read().split()):
    if data[i * 4000:(i + 1) * 4000] != bytes([i % 251 + 1]) * 4000:
        print("write", i, "returned and is lost; the file has", len(data), "bytes"); break' "$dd")
		if [ -n "$bad" ]; then
			echo "FAIL wberr: $mode mode: $bad (the appender: $got)"
			rc=1
		else
			echo "ok   wberr: $mode mode: $got; every write that returned is there"
		fi
	done
	umount "$WB/fs" "$WB/media"
	rm -rf "$WB"
fi

# CRASH_POWER_POINTS=0 leaves this out (on the lab's pmem, where the real
# power cuts are suites/powercut-pmem.sh).
if wanted power && [ "${CRASH_POWER_POINTS:-60}" -gt 0 ]; then
	power_image
	CRASH_MODES="$MODES strict+posix" CRASH_OUT=${SFS_TEST_OUT:-/tmp}/crash-failures/power \
		"$HERE/run.sh" "$PW" "${CRASH_POWER_POINTS:-60}" power || rc=1
elif [ "${CRASH_POWER_POINTS:-60}" -eq 0 ] && { wanted power || wanted down || wanted logfail || wanted wberr; }; then
	echo "down, logfail, wberr, power points: none (CRASH_POWER_POINTS=0)"
fi
exit $rc
