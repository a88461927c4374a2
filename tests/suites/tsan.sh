#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The library and the C tests built with ThreadSanitizer (make
# SANITIZE=thread, into build-tsan/), the runtime preloaded first, run the
# tests that race threads (or processes) on one file, in each mode: the
# lock-free readers, the writers' stripes, the log, the library's own
# threads. Any ThreadSanitizer report (or message) fails the suite.
#
# Left out: exit_paths. Its last thread's exit waits for the end of every
# thread that is not the library's (util/threads.c), and TSan's own
# background thread never ends: the process would never exit.
# TSAN_OPTIONS: die_after_fork=0: torn_reads forks a threaded process and
# the library in each child starts its own threads, which TSan refuses by
# default (a fork taken while another thread held one of TSan's locks could
# deadlock the child; the per-test timeout catches that).
# TSan's fstat calls glibc's __fxstat, which the library does not
# interpose: a program's fstat shows the kernel's size, without staged
# appends (basic and datapath check it; none of the tests here does).
# Knobs: TSAN_TESTS (the tests; `tests/run.sh tsan NAME...` picks some of
# them), TSAN_TORN_SECONDS (torn_reads' time cap per run, default 2),
# TSAN_TEST_TIMEOUT (seconds per test, default 180), TSAN_TEST_SCALE (the
# long tests' rounds, as SFS_TEST_SCALE; default 0.5: under TSan each round
# costs 5-15 times as much, and the code paths raced are the same in every
# round).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TESTS=${TSAN_TESTS:-threads cwd_threads lograce torn_reads dsync_stripes twoproc_append kfd_swap pending_writes pending_reads}
# tests/run.sh tsan NAME...: some of TESTS.
sfs_tests $TESTS
t=$TESTS TESTS=
for n in $t; do wanted $n && TESTS+=" $n"; done
TSAN=$(gcc -print-file-name=libtsan.so.2)
[ -e "$TSAN" ] || skip "no libtsan for this gcc"
targets=(build-tsan/libsplitfs.so)
for t in $TESTS; do targets+=("build-tsan/tests/$t"); done
# gcc's: its runtime is the one preloaded.
t0=$SECONDS
make -s -j"$(nproc)" -C "$ROOT" CC=gcc SANITIZE=thread "${targets[@]}" >/dev/null ||
	die "ThreadSanitizer build failed"
echo "built with ThreadSanitizer in $((SECONDS - t0))s"
LIB=$ROOT/build-tsan/libsplitfs.so
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 die_after_fork=0"
export TORN_SECONDS=${TSAN_TORN_SECONDS:-2}
export SFS_TEST_SCALE=${TSAN_TEST_SCALE:-0.5}
tsan() {
	timeout --kill-after=10 "${TSAN_TEST_TIMEOUT:-180}" \
		env SPLITFS_ROOT="$SFS_MNT" LD_PRELOAD="$TSAN:$LIB" "$@"
}
rc=0

for mode in $MODES; do
	for name in $TESTS; do
		d=$WORK/$name.$mode
		mkdir -p "$d"
		t0=$SECONDS
		SPLITFS_MODE=$mode tsan "$ROOT/build-tsan/tests/$name" "$d" >"$d.log" 2>&1
		r=$?
		if [ $r = 0 ] && ! grep -q "ThreadSanitizer" "$d.log"; then
			echo "ok   $name ($mode) $((SECONDS - t0))s"
		elif [ $r = 77 ] && ! grep -q "ThreadSanitizer" "$d.log"; then
			echo "skip $name ($mode)"
		else
			echo "FAIL $name ($mode): exit $r"
			grep -A 30 -m 1 "ThreadSanitizer" "$d.log" || tail -n 30 "$d.log"
			rc=1
		fi
	done
done
exit $rc
