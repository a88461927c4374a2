#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sync and strict modes, and POSIX mode's fsync, on DAX without system calls
# (tests/suites/dax.sh runs this in the lab's guest on fsdax pmem; elsewhere
# it skips). tests/c/datapath (N 4 KiB preads, N overwrites, N appends on one
# file; DATAPATH_OPS, default 10,000) under `strace -f -c` in sync and
# strict modes, after a warm-up run that leaves a free log behind (so the
# measured run does not count the log's creation). Must hold, per mode:
#   - the library's stats: the log is on DAX (dax_logs), one fence per record,
#     the overwrites stored through mappings, the appends staged
#   - the fsync family (fsync fdatasync msync sync_file_range syncfs sync):
#     a handful per process and file (log, commit at close), not per operation
#   - no synchronous log writes (pwritev2) beyond 1% of the operations
#   - the read/write family (everything the process reads and writes with a
#     system call: its start, the relinks of staged appends, the report)
#     under 1% of the 2N overwrites and appends.
# Then POSIX mode with an fsync after every overwrite (below).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v strace >/dev/null 2>&1 || skip "strace not installed"
command -v xfs_io >/dev/null 2>&1 || skip "xfs_io not installed"
prog=$SFS_TESTBIN/datapath
[ -x "$prog" ] || die "$prog missing (make tests)"
: >"$WORK/probe"
attr=$(xfs_io -c "statx -r" "$WORK/probe" 2>/dev/null | sed -n 's/^stat.attributes = //p')
[ $((${attr:-0} & 0x200000)) -ne 0 ] ||
	skip "$SFS_MNT is not DAX (tests/suites/dax.sh runs this on the lab's pmem)"

N=${DATAPATH_OPS:-10000}
export DATAPATH_OPS=$N
LIMIT=$((2 * N / 100))
SYNCS="fsync fdatasync msync sync_file_range syncfs sync"
. "$(dirname "$0")/../strace_counts.sh"
FAMILY=$STRACE_RW_FAMILY
ART=${SFS_TEST_OUT:-$ROOT/tests/output}/dax-syscalls
rm -rf "$ART"
mkdir -p "$ART"
event() { awk -v e="$2" '$1 == "event" && $2 == e {n += $3} END {print n + 0}' "$1"; }

rc=0
# A log big enough that no checkpoint (which fsyncs the files) falls inside.
export SPLITFS_LOG_SIZE=$(((3 * N * 4160 / 1048576 + 16) / 16 * 16))M
for mode in sync strict; do
	d=$WORK/$mode
	mkdir -p "$d"
	SPLITFS_MODE=$mode sfs_run "$prog" "$d" >"$ART/warmup.$mode" 2>&1 ||
		{ echo "FAIL $mode: the warm-up run failed"; tail -n 20 "$ART/warmup.$mode"; rc=1; continue; }
	SPLITFS_MODE=$mode SPLITFS_STATS=1 strace -f -c -o "$ART/$mode.strace" \
		"$SFS_CLI" run --root "$SFS_MNT" -- "$prog" "$d" >"$ART/$mode.out" 2>&1
	r=$?
	grep '^datapath:\|^per_op' "$ART/$mode.out"
	[ $r -eq 0 ] || { echo "FAIL $mode: datapath failed (exit $r)"; tail -n 30 "$ART/$mode.out"; rc=1; continue; }
	grep -q '^datapath: library loaded' "$ART/$mode.out" || { echo "FAIL $mode: library not loaded"; rc=1; }
	s=$ART/$mode.out
	logs=$(event "$s" dax_logs) fences=$(event "$s" dax_fences) records=$(event "$s" log_records)
	stores=$(event "$s" dax_stores) staged=$(event "$s" staged_bytes) faults=$(sed -n 's/^rusage minflt \([0-9]*\).*/\1/p' "$s" | head -n 1)
	syncs=$(strace_calls "$ART/$mode.strace" $SYNCS)
	dsync=$(strace_calls "$ART/$mode.strace" pwritev2)
	fam=$(strace_calls "$ART/$mode.strace" $FAMILY)
	echo "$mode: log on DAX: $logs; $records records, $fences fences, $stores bytes stored" \
		"through mappings, $staged bytes staged, $faults page faults (minflt); syscalls: fsync family $syncs," \
		"pwritev2 $dsync, read/write family $fam ($N preads, $N overwrites, $N appends)"
	[ "$logs" -ge 1 ] || { echo "FAIL $mode: the log was not mapped on DAX"; rc=1; }
	[ "$fences" -ge "$records" ] && [ "$records" -ge $((2 * N)) ] ||
		{ echo "FAIL $mode: $fences fences for $records records (want >= one per record, >= $((2 * N)) records)"; rc=1; }
	[ "$stores" -ge $((N * 4096 * 9 / 10)) ] ||
		{ echo "FAIL $mode: only $stores bytes of the $N overwrites stored through mappings"; rc=1; }
	[ "$staged" -ge $((N * 4096 * 9 / 10)) ] ||
		{ echo "FAIL $mode: only $staged bytes of the $N appends staged"; rc=1; }
	[ "$syncs" -le 10 ] ||
		{ echo "FAIL $mode: $syncs calls of the fsync family for $((3 * N)) operations"; rc=1; }
	[ "$dsync" -lt "$LIMIT" ] || { echo "FAIL $mode: $dsync synchronous log writes (pwritev2)"; rc=1; }
	[ "$fam" -lt "$LIMIT" ] ||
		{ echo "FAIL $mode: $fam read/write calls for $((2 * N)) overwrites and appends (limit $LIMIT)"; rc=1; }
	[ $rc -eq 0 ] || sed 's/^/    /' "$ART/$mode.strace"
done

# POSIX mode, every overwrite fsynced (DATAPATH_SYNC=1: fdatasync and fsync
# alternately): the stores are flushed and fenced as they are made, so the
# N fsyncs must be answered without a system call (dax_syncs) and the
# fsync family stay a handful (the setup's, the close's). Except while
# libpmem2's primitives are being learnt in the background (started by the
# setup's fsync; tens of milliseconds on the emulated CPU): a store made
# then is plain (dax_unflushed) and sends the next fsync to the kernel.
# Those may not be more than a quarter of the overwrites. The same program
# on the kernel alone, for the times.
d=$WORK/posix
mkdir -p "$d"
DATAPATH_SYNC=1 "$prog" "$d" >"$ART/kernel.out" 2>&1 ||
	{ echo "FAIL posix: datapath on the kernel failed"; tail -n 20 "$ART/kernel.out"; rc=1; }
grep '^datapath:' "$ART/kernel.out" | sed 's/^datapath:/kernel datapath:/'
SPLITFS_MODE=posix DATAPATH_SYNC=1 SPLITFS_STATS=1 strace -f -c -o "$ART/posix.strace" \
	"$SFS_CLI" run --root "$SFS_MNT" -- "$prog" "$d" >"$ART/posix.out" 2>&1
r=$?
grep '^datapath:\|^per_op' "$ART/posix.out"
if [ $r -ne 0 ]; then
	echo "FAIL posix: datapath failed (exit $r)"
	tail -n 30 "$ART/posix.out"
	rc=1
else
	s=$ART/posix.out
	dsyncs=$(event "$s" dax_syncs) fences=$(event "$s" dax_fences) stores=$(event "$s" dax_stores)
	early=$(event "$s" dax_unflushed)
	syncs=$(strace_calls "$ART/posix.strace" $SYNCS)
	fam=$(strace_calls "$ART/posix.strace" $FAMILY)
	echo "posix: $dsyncs of $N fsyncs without a system call, $early overwrites before the" \
		"primitives were known, $fences fences, $stores bytes stored through mappings;" \
		"syscalls: fsync family $syncs, read/write family $fam"
	[ "$early" -le $((N / 4)) ] ||
		{ echo "FAIL posix: $early of $N overwrites made before libpmem2's primitives were known"; rc=1; }
	[ $((dsyncs + early)) -ge $((N * 99 / 100)) ] ||
		{ echo "FAIL posix: only $dsyncs of $N fsyncs answered by the flushes ($early early)"; rc=1; }
	[ $((fences + early)) -ge "$N" ] ||
		{ echo "FAIL posix: $fences fences for $N durable overwrites ($early early)"; rc=1; }
	[ "$stores" -ge $((N * 4096 * 9 / 10)) ] ||
		{ echo "FAIL posix: only $stores bytes of the $N overwrites stored through mappings"; rc=1; }
	[ "$syncs" -le $((10 + early)) ] ||
		{ echo "FAIL posix: $syncs calls of the fsync family for $N fsyncs ($early early)"; rc=1; }
	[ "$fam" -lt "$LIMIT" ] ||
		{ echo "FAIL posix: $fam read/write calls for $((2 * N)) overwrites and appends (limit $LIMIT)"; rc=1; }
	[ $rc -eq 0 ] || sed 's/^/    /' "$ART/posix.strace"
fi
exit $rc
