#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The data path without system calls: tests/c/datapath does 10,000 4 KiB
# preads, 10,000 4 KiB overwrites and 10,000 4 KiB appends on one file. Run
# under `strace -f -c` natively (about 30,000 read/write calls) and under
# SplitFS, where the read/write family (read pread64 readv preadv preadv2
# write pwrite64 writev pwritev pwritev2) must total under 1% of the 30,000
# operations. strace traces `splitfs run`, which execs the program, so the
# counts are the program's (plus the few of the CLI and the dynamic loader).
# A second run forks a child that exits at once before the overwrites: the
# parent's descriptor must come back to the library (fs/forkwatch.h); a
# third spawns a program while the descriptor is pending (close-on-exec),
# without and with file actions.
# A fourth watches the library's own lookups of a file that dd and head read
# and write: none may ask for its timestamps (sys/statq.h). A fifth counts
# the calls of cat reading files once each, and of tar -x writing them:
# no more opens, closes, fcntls and stats than natively; of rsync
# walking directories: no stat of a directory; and of a log that syncs
# each record: no fallocate or statx per record; and of a file the process
# knows, opened again and again to be read: no statx per open; and of a
# file another process holds, its size asked again and again: no statx
# per lseek. A sixth looks at sync mode's start: no call on the root in a
# program that has nothing there, each write synced in one that inherits a
# file there; and stdio's writes there synced before each returns. A
# seventh counts the real functions a process looks up: none in /bin/true.
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v strace >/dev/null 2>&1 || skip "strace not installed"
prog=$SFS_TESTBIN/datapath
[ -x "$prog" ] || die "$prog missing (make tests)"

OPS=$((3 * ${DATAPATH_OPS:-10000})) # DATAPATH_OPS: fewer in the lab's emulated CPU
# The native run shows that strace counts every call (each operation is
# one): STRACE_NATIVE_OPS makes it shorter (in the lab, where a traced
# call costs ~1 ms and the native run took 90 of the suite's 260 s).
NATIVE_OPS=$((3 * ${STRACE_NATIVE_OPS:-${DATAPATH_OPS:-10000}}))
LIMIT=$((OPS / 100))
ART=${SFS_TEST_OUT:-$ROOT/tests/output}/strace
rm -rf "$ART"
mkdir -p "$ART"
. "$(dirname "$0")/../strace_counts.sh"
FAMILY=$STRACE_RW_FAMILY
SHOW="$FAMILY mmap munmap fsync ioctl copy_file_range fallocate ftruncate execve"

show() {
	local f=$1 line="" s c
	for s in $SHOW; do
		c=$(strace_calls "$f" "$s")
		[ "$c" = 0 ] || line="$line $s=$c"
	done
	echo "  syscalls:$line"
	echo "  read/write family total: $(strace_calls "$f" $FAMILY)"
}

# part TITLE: a part of the suite begins; `part` alone ends the last one.
# Each part's seconds are shown (in the lab's emulated CPU this suite is
# one of the longest).
part_t0=
part() {
	[ -z "$part_t0" ] || echo "  ($((SECONDS - part_t0)) s)"
	part_t0=$SECONDS
	[ $# = 0 ] || echo "== $*"
}

rc=0
mkdir -p "$WORK/kernel" "$WORK/splitfs"

part "native"
DATAPATH_OPS=$((NATIVE_OPS / 3)) strace -f -c -o "$ART/kernel.strace" "$prog" "$WORK/kernel" \
	>"$ART/kernel.out" 2>&1
r=$?
cat "$ART/kernel.out"
[ $r -eq 0 ] || { echo "FAIL: datapath fails natively (exit $r)"; rc=1; }
show "$ART/kernel.strace"
native=$(strace_calls "$ART/kernel.strace" $FAMILY)
# The measurement itself: natively every operation is a system call.
if [ "$native" -lt $NATIVE_OPS ]; then
	echo "FAIL: only $native read/write calls counted natively, want >= $NATIVE_OPS (strace counting broken?)"
	rc=1
fi

part "SplitFS"
SPLITFS_STATS=1 strace -f -c -o "$ART/splitfs.strace" "$SFS_CLI" run --root "$SFS_MNT" -- \
	"$prog" "$WORK/splitfs" >"$ART/splitfs.out" 2>&1
r=$?
grep '^datapath:' "$ART/splitfs.out"
[ $r -eq 0 ] || { echo "FAIL: datapath fails under SplitFS (exit $r)"; tail -n 30 "$ART/splitfs.out"; rc=1; }
show "$ART/splitfs.strace"
# The relink's copy of staged appends into the file is a pwrite a piece,
# and a piece's size follows how fast the host copies (relink/pieces.h: 2
# MiB down to 4 KiB where the host takes back free memory): the flush's
# calls, not the operations'. Counted by the library's statistics, shown,
# and left out of the limit.
relink_pieces() { awk '$1 == "event" && $2 == "relink_pieces" {n += $3} END {print n + 0}' "$1"; }
pieces=$(relink_pieces "$ART/splitfs.out")
lib=$(($(strace_calls "$ART/splitfs.strace" $FAMILY) - pieces))
echo "  the relink's copy: $pieces pieces (left out below)"

# The counts must come from the program, with the library loaded: strace
# followed the CLI into the program (two execve), the program saw the
# library, and the library served the 10,000 preads.
execs=$(strace_calls "$ART/splitfs.strace" execve)
[ "$execs" -ge 2 ] || { echo "FAIL: strace saw $execs execve, want 2 (CLI, program)"; rc=1; }
grep -q '^datapath: library loaded' "$ART/splitfs.out" ||
	{ echo "FAIL: the program did not see the library"; rc=1; }
# All but the first few: a descriptor the process opens on a file it has no
# inode of is the kernel's for its first 16 reads and writes (a pending
# descriptor, fs/fdtable.h), and the file's writer came first.
served=$(awk '$1 == "pread" && $2 ~ /^[0-9]+$/ {n += $2} END {print n + 0}' "$ART/splitfs.out")
echo "  the library's stats: $served preads served"
[ "$served" -ge $((OPS / 3 - 16)) ] ||
	{ echo "FAIL: the library's stats show $served preads, want >= $((OPS / 3 - 16))"; rc=1; }

pct=$(printf "%.2f" "$(echo "scale=4; 100 * $lib / $OPS" | bc)")
echo "read/write family: native $native for $NATIVE_OPS operations, SplitFS $lib (${pct}% of $OPS operations; limit < $LIMIT)"
if [ "$lib" -ge "$LIMIT" ]; then
	echo "FAIL: SplitFS makes $lib read/write system calls for $OPS operations"
	sed 's/^/    /' "$ART/splitfs.strace"
	rc=1
fi
# Not part of the verdict: other system calls that scale with the operations.
awk -v lim=$LIMIT -v fam=" $FAMILY " '$1 ~ /^[0-9.]+$/ && $NF != "total" && $4 >= lim &&
	!index(fam, " " $NF " ") {printf "NOTE: under SplitFS %s was called %d times (>= 1%% of the operations)\n", $NF, $4}' \
	"$ART/splitfs.strace"

# datapath_after NAME WHAT VAR=VALUE: datapath under SplitFS with that
# variable set, after WHAT (the log's words); its read/write family, left
# in $calls, must stay under the same limit.
datapath_after() {
	local name=$1 what=$2
	mkdir -p "$WORK/$name"
	env "$3" SPLITFS_STATS=1 strace -f -c -o "$ART/$name.strace" "$SFS_CLI" run --root "$SFS_MNT" -- \
		"$prog" "$WORK/$name" >"$ART/$name.out" 2>&1
	local r=$?
	grep '^datapath:' "$ART/$name.out"
	[ $r -eq 0 ] || { echo "FAIL: datapath after $what fails under SplitFS (exit $r)"; tail -n 30 "$ART/$name.out"; rc=1; }
	local p
	p=$(relink_pieces "$ART/$name.out")
	calls=$(($(strace_calls "$ART/$name.strace" $FAMILY) - p))
	echo "read/write family after $what: SplitFS $calls and the relink's $p (limit < $LIMIT)"
	if [ "$calls" -ge "$LIMIT" ]; then
		echo "FAIL: after $what SplitFS makes $calls read/write system calls for $OPS operations"
		rc=1
	fi
}

# After a fork whose child exits at once (a subshell, a system()-style
# helper), the parent's descriptor comes back to the library: the same
# limit for the overwrites and appends that follow the fork.
part "SplitFS, a child forked (and gone) before the overwrites"
datapath_after fork "a fork" DATAPATH_FORK=1
forked=$calls

# A program spawned while the file's descriptor is still pending (opened
# close-on-exec, so the child never has it): the library takes the file
# over all the same. Then with file actions that dup2 another descriptor
# into the child (as Rust's Command and make spawn), while pending and
# again once managed: only the dup2 source is shared (interpose/spawnfa.c).
part "SplitFS, a program spawned while the descriptor is pending"
datapath_after spawn1 "a spawn" DATAPATH_SPAWN=1
part "SplitFS, a program spawned with file actions while the descriptor is pending"
datapath_after spawn2 "a spawn with file actions" DATAPATH_SPAWN=2

# The library's own lookups of a file ask for no timestamps (sys/statq.h):
# on kernels with multigrain timestamps a stat that asks for mtime or ctime
# makes the file's next read pay an access-time update. dd and head make
# no stat of the file themselves; strace -P keeps the calls on the file
# (by name or descriptor); any stat but a statx without MTIME/CTIME fails.
# The last head reads the file in 25 reads of 8 KiB: its descriptor,
# pending for 16, is looked up when the library manages it (dd's, dup'ed
# to 0 or 1, stay the kernel's).
part "SplitFS, the library's lookups of a file it reads and writes"
quiet=$WORK/quiet
head -c 200000 /dev/urandom >"$quiet"
strace -f -P "$quiet" -e trace=%stat,%fstat,statx -o "$ART/quiet.strace" \
	"$SFS_CLI" run --root "$SFS_MNT" -- sh -c 'dd if="$1" of=/dev/null bs=8k status=none &&
		dd if=/dev/zero of="$1" bs=4k count=2 seek=1 conv=notrunc status=none &&
		head -c 100 "$1" >/dev/null && head -c 200000 "$1" >/dev/null' sh "$quiet" \
	>"$ART/quiet.out" 2>&1 ||
	{ echo "FAIL: dd/head under SplitFS (exit $?)"; cat "$ART/quiet.out"; rc=1; }
stats='newfstatat|fstatat64|fstat|stat|lstat|fstat64|stat64|lstat64' # no mask: everything
looks=$(grep -cE " (statx|$stats)[(]" "$ART/quiet.strace" || true)
# A stat without a mask asks for everything; a statx, for its mask.
loud=$(awk -v stats=" ($stats)[(]" '$0 ~ stats {n++; next}
	/ statx\(/ {m = $0; sub(/.*statx\([^,]*, "[^"]*", [^,]*, /, "", m); sub(/,.*/, "", m)
		if (m ~ /MTIME|CTIME|BASIC_STATS|STATX_ALL/) n++}
	END {print n + 0}' "$ART/quiet.strace")
echo "  lookups of the file: $looks, asking for timestamps: $loud"
[ "$looks" -gt 0 ] || { echo "FAIL: strace saw no lookup of the file (did the library manage it?)"; rc=1; }
if [ "$loud" -ne 0 ]; then
	echo "FAIL: the library asked for the file's timestamps:"
	grep -E ' [a-z0-9]*stat[a-z0-9]*\(' "$ART/quiet.strace" | cut -c1-160 | sed 's/^/    /'
	rc=1
fi
# Files read once (cat, tar, grep): an open, a read and a close cost the
# kernel's own calls: no descriptor of the library's (an F_DUPFD and,
# later, its close) for a file that is never read again, no lookup of a
# dead process's staged appends while no store is bound (staging/census.h;
# the CLI's start adopts what earlier suites' killed processes left), and
# no statx of the file while the process has no inode.
ONCE=200
# once_calls WHAT NATIVE SPLITFS SYSCALL...: each call's count for the
# work WHAT names, under SplitFS within ONCE/4 of the native one (the CLI,
# the loader and the library's start make a few dozen).
once_calls() {
	local what=$1 native=$2 lib=$3 s k l
	shift 3
	for s in "$@"; do
		k=$(strace_calls "$native" "$s")
		l=$(strace_calls "$lib" "$s")
		echo "  $s: native $k, SplitFS $l"
		if [ "$l" -gt $((k + ONCE / 4)) ]; then
			echo "FAIL: $l $s calls under SplitFS for $what (native $k)"
			rc=1
		fi
	done
}
part "SplitFS, $ONCE files read once by cat"
mkdir -p "$WORK/once"
for i in $(seq $ONCE); do echo "file $i" >"$WORK/once/f$i"; done
strace -f -c -o "$ART/once-kernel.strace" cat "$WORK"/once/f* >/dev/null ||
	{ echo "FAIL: cat natively"; rc=1; }
strace -f -c -o "$ART/once.strace" "$SFS_CLI" run --root "$SFS_MNT" -- \
	cat "$WORK"/once/f* >"$ART/once.out" 2>&1 || { echo "FAIL: cat under SplitFS"; rc=1; }
once_calls "$ONCE files read once" "$ART/once-kernel.strace" "$ART/once.strace" \
	openat close fcntl statx newfstatat fstat

# Files read again and again (a server of small files): a process that
# has an inode of a file (it wrote and read it, then closed it) opens it
# read-only, reads 4 KiB and closes it, ONCE times: the kernel's own calls
# too, no statx of the file at each open.
part "SplitFS, a file reopened $ONCE times to be read"
mkdir -p "$WORK/reopen-kernel" "$WORK/reopen"
strace -f -c -o "$ART/reopen-kernel.strace" "$SFS_TESTBIN/reopen_reads" "$WORK/reopen-kernel" \
	$ONCE >"$ART/reopen-kernel.out" 2>&1 || { echo "FAIL: reopen_reads natively"; rc=1; }
strace -f -c -o "$ART/reopen.strace" "$SFS_CLI" run --root "$SFS_MNT" -- \
	"$SFS_TESTBIN/reopen_reads" "$WORK/reopen" $ONCE >"$ART/reopen.out" 2>&1 ||
	{ echo "FAIL: reopen_reads under SplitFS"; cat "$ART/reopen.out"; rc=1; }
once_calls "a file reopened $ONCE times" "$ART/reopen-kernel.strace" "$ART/reopen.strace" \
	openat close fcntl statx newfstatat fstat

# Files written once (tar -x, cp): in POSIX mode, a create, its writes and
# its close cost the kernel's own calls, and no statx of the file.
part "SplitFS, $ONCE files written once by tar -x"
tar -cf "$WORK/once.tar" -C "$WORK" once
mkdir -p "$WORK/untar-kernel" "$WORK/untar"
strace -f -c -o "$ART/untar-kernel.strace" tar -xf "$WORK/once.tar" -C "$WORK/untar-kernel" ||
	{ echo "FAIL: tar -x natively"; rc=1; }
SPLITFS_MODE=posix strace -f -c -o "$ART/untar.strace" "$SFS_CLI" run --root "$SFS_MNT" -- \
	tar -xf "$WORK/once.tar" -C "$WORK/untar" >"$ART/untar.out" 2>&1 ||
	{ echo "FAIL: tar -x under SplitFS"; rc=1; }
diff -r "$WORK/untar-kernel" "$WORK/untar" >/dev/null || { echo "FAIL: tar -x trees differ"; rc=1; }
once_calls "$ONCE files written once" "$ART/untar-kernel.strace" "$ART/untar.strace" \
	openat close fcntl statx newfstatat fstat

# A directory walk (rsync's sender opens each directory O_DIRECTORY): no
# lookup of a directory, which the library has nothing to do with.
if command -v rsync >/dev/null 2>&1; then
	part "SplitFS, rsync -a of $((ONCE / 2)) directories"
	for i in $(seq $((ONCE / 2))); do mkdir -p "$WORK/walk/d$i" && echo "$i" >"$WORK/walk/d$i/f"; done
	strace -f -c -o "$ART/walk-kernel.strace" rsync -a "$WORK/walk/" "$WORK/walk-kernel/" ||
		{ echo "FAIL: rsync natively"; rc=1; }
	strace -f -c -o "$ART/walk.strace" "$SFS_CLI" run --root "$SFS_MNT" -- \
		rsync -a "$WORK/walk/" "$WORK/walk-splitfs/" >"$ART/walk.out" 2>&1 ||
		{ echo "FAIL: rsync under SplitFS"; rc=1; }
	diff -r "$WORK/walk-kernel" "$WORK/walk-splitfs" >/dev/null || { echo "FAIL: rsync trees differ"; rc=1; }
	once_calls "$((ONCE / 2)) directories walked" "$ART/walk-kernel.strace" "$ART/walk.strace" \
		openat close statx newfstatat fstat
else
	echo "note: rsync not installed (tests/deps.sh installs it): the directory walk is not counted"
fi

# A log that syncs each record (tests/c/synced_log: records of 100 B to
# 20 KiB, each fdatasynced, a burst of 1 MiB unsynced, then synced records
# again): in POSIX mode no fallocate of the library's reservation (it was
# punched and refilled at each sync) and no statx of the file per record.
part "SplitFS, a log of $((2 * ONCE)) records each fdatasynced"
mkdir -p "$WORK/wal-kernel" "$WORK/wal"
strace -f -c -o "$ART/wal-kernel.strace" "$SFS_TESTBIN/synced_log" "$WORK/wal-kernel" $ONCE \
	>"$ART/wal-kernel.out" 2>&1 || { echo "FAIL: synced_log natively"; rc=1; }
SPLITFS_MODE=posix strace -f -c -o "$ART/wal.strace" "$SFS_CLI" run --root "$SFS_MNT" -- \
	"$SFS_TESTBIN/synced_log" "$WORK/wal" $ONCE >"$ART/wal.out" 2>&1 ||
	{ echo "FAIL: synced_log under SplitFS"; cat "$ART/wal.out"; rc=1; }
# Its 20 KiB records go through staging windows (one relink, and its statx,
# each): a fifth of the records at most, not one call or two per record.
for s in fallocate statx fdatasync; do
	k=$(strace_calls "$ART/wal-kernel.strace" "$s")
	l=$(strace_calls "$ART/wal.strace" "$s")
	echo "  $s: native $k, SplitFS $l"
	[ "$l" -le $((k + 2 * ONCE / 5)) ] ||
		{ echo "FAIL: $l $s calls under SplitFS for $((2 * ONCE)) records each synced (native $k)"; rc=1; }
done

# The size of a file another process holds open, asked with
# lseek(SEEK_END) (tests/c/shared_size; PostgreSQL asks each relation's
# size so): with no lease, the kernel's lseek answers, without a stat of
# the file per lseek, in POSIX and sync modes (managed after a few calls,
# and from the open). strace -P keeps the calls on the file: a start's
# look at the library's own files (as many as earlier runs left there)
# is not counted.
part "SplitFS, the size of a file another process holds, asked $((3 * ONCE)) times"
mkdir -p "$WORK/size-kernel"
strace -f -c -P "$WORK/size-kernel/shared" -o "$ART/size-kernel.strace" \
	"$SFS_TESTBIN/shared_size" "$WORK/size-kernel" $ONCE >"$ART/size-kernel.out" 2>&1 ||
	{ echo "FAIL: shared_size natively"; rc=1; }
for mode in posix sync; do
	mkdir -p "$WORK/size-$mode"
	SPLITFS_MODE=$mode strace -f -c -P "$WORK/size-$mode/shared" -o "$ART/size-$mode.strace" \
		"$SFS_CLI" run --root "$SFS_MNT" -- \
		"$SFS_TESTBIN/shared_size" "$WORK/size-$mode" $ONCE >"$ART/size-$mode.out" 2>&1 ||
		{ echo "FAIL: shared_size under SplitFS ($mode)"; cat "$ART/size-$mode.out"; rc=1; }
	once_calls "$((3 * ONCE)) sizes asked ($mode)" "$ART/size-kernel.strace" \
		"$ART/size-$mode.strace" lseek statx newfstatat fstat
done

# Sync mode's start: a program that inherits no descriptor on the root's
# file system and names no path (/bin/echo writing into a pipe) makes no
# call on the root (its start waits, src/init.c); one that inherits a
# writable descriptor of a file there (the shell's `>>file`) makes each of
# its writes durable: an fdatasync after each write of /bin/echo; and one
# that names a path starts there and then: tee's writes to the file it
# opens synced too.
part "SplitFS, sync mode: what programs start with"
TEE=$(command -v tee) # by its path, as the checks below name it
SPLITFS_MODE=sync strace -f -s 4096 -o "$ART/start-sync.strace" "$SFS_CLI" run --root "$SFS_MNT" -- \
	sh -c "/bin/echo piped | cat >/dev/null; /bin/echo one >>\"$WORK/inherited\"; /bin/echo two >>\"$WORK/inherited\"; /bin/echo three | $TEE \"$WORK/named\" >/dev/null" \
	>"$ART/start-sync.out" 2>&1 || { echo "FAIL: sh under SplitFS, sync mode"; rc=1; }
# child_calls PROGRAM ARG FD: of the child started as PROGRAM ARG, its
# calls on the root (.splitfs), its writes to FD, its syncs of FD. A call
# another process's interrupts is printed in two lines, the first ending
# "<unfinished ...>" after its arguments (echo and tee run side by side).
child_calls() {
	local pid
	pid=$(grep -F "execve(\"$1\", [\"$1\", \"$2\"]" "$ART/start-sync.strace" | awk '{ print $1 }')
	[ -n "$pid" ] || { echo "-1 -1 -1"; return; }
	echo "$(grep -c "^$pid .*\.splitfs" "$ART/start-sync.strace") $(grep -cE "^$pid +write\($3," "$ART/start-sync.strace") $(grep -cE "^$pid +f(data)?sync\($3(\)| <unfinished)" "$ART/start-sync.strace")"
}
read -r root_calls writes syncs <<<"$(child_calls /bin/echo piped 1)"
echo "  /bin/echo into a pipe: $root_calls calls on the root"
[ "$root_calls" = 0 ] || { echo "FAIL: a sync-mode program with nothing on the root started there ($root_calls calls)"; rc=1; }
for w in "/bin/echo one 1" "/bin/echo two 1" "$TEE $WORK/named 3"; do
	read -r root_calls writes syncs <<<"$(child_calls $w)"
	echo "  ${w% *}: $writes writes, $syncs syncs, $root_calls calls on the root"
	[ "$writes" -ge 1 ] && [ "$syncs" -ge "$writes" ] ||
		{ echo "FAIL: ${w% *} under sync mode: $writes writes, $syncs syncs of its file"; rc=1; }
done
[ "$(cat "$WORK/inherited" 2>/dev/null)" = "$(printf 'one\ntwo')" ] && [ "$(cat "$WORK/named" 2>/dev/null)" = three ] ||
	{ echo "FAIL: the sync-mode programs' files hold other bytes"; rc=1; }

# stdio's writes in sync and strict modes (tests/c/stdio_sync): glibc's
# internal write, unseen by the wrappers, to a file on the root (stdout
# inherited, stderr onto a file of the process's and glibc's error
# reporters' writes to it, streams it opened, the exit's flush of stdout)
# is followed by a sync of its descriptor before
# the program's next marker (a getppid after each step) or its exit.
# unsynced TRACE PID: PID's writes with no sync of their descriptor before
# the next marker or exit_group (each on stderr), then how many writes.
unsynced() {
	awk -v pid="$2" '
	$1 != pid { next }
	{ c = $0; sub(/^[0-9]+ +/, "", c) }
	c ~ /^write\([0-9]+,/ { fd = c; sub(/^write\(/, "", fd); sub(/,.*/, "", fd); open_[fd] = 1; n++; next }
	c ~ /^f(data)?sync\([0-9]+[) ]/ { fd = c; sub(/^f(data)?sync\(/, "", fd); sub(/[) ].*/, "", fd); delete open_[fd]; next }
	c ~ /^(getppid|exit_group)\(/ { sub(/\(.*/, "", c); for (fd in open_) print "  a write to " fd " not synced before its " c > "/dev/stderr"; split("", open_) }
	END { print n + 0 }' "$1"
}
part "SplitFS, sync and strict modes: stdio's writes"
mkdir -p "$WORK/stdio-kernel"
"$SFS_TESTBIN/stdio_sync" "$WORK/stdio-kernel" >"$WORK/stdio-kernel/out" 2>"$ART/stdio-kernel.err" ||
	{ echo "FAIL: stdio_sync natively"; cat "$ART/stdio-kernel.err"; rc=1; }
for mode in sync strict; do
	mkdir -p "$WORK/stdio-$mode"
	SPLITFS_MODE=$mode strace -f -o "$ART/stdio-$mode.strace" "$SFS_CLI" run --root "$SFS_MNT" -- \
		"$SFS_TESTBIN/stdio_sync" "$WORK/stdio-$mode" >"$WORK/stdio-$mode/out" 2>"$ART/stdio-$mode.err" ||
		{ echo "FAIL: stdio_sync under SplitFS ($mode)"; cat "$ART/stdio-$mode.err"; rc=1; }
	cmp -s "$WORK/stdio-kernel/out" "$WORK/stdio-$mode/out" ||
		{ echo "FAIL: stdout of stdio_sync ($mode) differs from the native run's"; rc=1; }
	pid=$(grep -F "execve(\"$SFS_TESTBIN/stdio_sync\"" "$ART/stdio-$mode.strace" | tail -1 | awk '{ print $1 }')
	writes=$(unsynced "$ART/stdio-$mode.strace" "$pid" 2>"$ART/stdio-$mode.unsynced")
	bad=$(wc -l <"$ART/stdio-$mode.unsynced")
	echo "  $mode: $writes writes, $bad not synced before the call returned"
	cat "$ART/stdio-$mode.unsynced"
	# 3 of stdout before the exit, 2 of stderr, 7 of the error reporters
	# and 1 of stdout that error writes out, 4 unbuffered, 7 wide
	# unbuffered, 1 wide large, 1 line, 4 full buffers, 1 at exit, 1 of
	# errx: 32, and more where stdio splits one.
	[ "$writes" -ge 32 ] && [ "$bad" = 0 ] ||
		{ echo "FAIL: stdio's writes under $mode mode: $writes, $bad not synced"; rc=1; }
done

# The real functions a process looks up (src/sys/real.h): each at its
# first use, so a program that calls none of them (/bin/true, whose POSIX
# mode start waits for a path) makes none of the ~130 lookups, each a
# dlsym (the loader's LD_DEBUG=bindings shows them).
part "SplitFS: the real functions a process looks up"
ROWS=$(grep -oE '^[[:space:]]*X\([^,]+, *[A-Za-z_0-9]+' "$ROOT/src/sys/real.h" | sed 's/.*, *//' | sort -u)
[ "$(echo "$ROWS" | wc -l)" -ge 100 ] || { echo "FAIL: the rows of src/sys/real.h not found"; rc=1; }
# looked_up FILE: how many rows the library's bindings in FILE name.
looked_up() {
	grep -E 'libsplitfs\.so.* to .*normal symbol' "$1" | sed -E 's/.*symbol `([^'"'"']+).*/\1/' |
		sort -u | grep -cxF -f <(echo "$ROWS")
}
SPLITFS_MODE=posix "$SFS_CLI" run --root "$SFS_MNT" -- env LD_DEBUG=bindings /bin/true \
	2>"$ART/lookups-true.txt" || { echo "FAIL: /bin/true under SplitFS"; rc=1; }
echo "hello" >"$WORK/hello"
SPLITFS_MODE=posix "$SFS_CLI" run --root "$SFS_MNT" -- env LD_DEBUG=bindings cat "$WORK/hello" \
	2>"$ART/lookups-cat.txt" >/dev/null || { echo "FAIL: cat under SplitFS"; rc=1; }
t=$(looked_up "$ART/lookups-true.txt")
c=$(looked_up "$ART/lookups-cat.txt")
echo "  /bin/true: $t lookups; cat of a file on the root: $c"
[ "$c" -ge 5 ] || { echo "FAIL: no lookups seen for cat ($c): LD_DEBUG output not understood"; rc=1; }
[ "$t" = 0 ] || { echo "FAIL: /bin/true looked up $t real functions it never calls"; rc=1; }

part
[ $rc -eq 0 ] || die "strace suite failed"
echo "the data path makes $lib read/write system calls under SplitFS ($forked with a fork)"
