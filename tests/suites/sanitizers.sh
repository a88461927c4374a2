#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The library built with AddressSanitizer and UndefinedBehaviorSanitizer
# (make SANITIZE=address,undefined, into build-san/), preloaded behind the
# ASan runtime, runs the C tests, the errno battery (compared with the
# kernel) and an fsx run. Any sanitizer report fails the suite.
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# The tests and tools are built with the sanitizers too (into build-san/,
# not run from there): the warnings they add (-Wclobbered, format
# truncation) must hold for them as for the library.
make -s -j"$(nproc)" -C "$ROOT" SANITIZE=address,undefined all tests >/dev/null ||
	die "sanitizer build failed"
SAN=$ROOT/build-san/libsplitfs.so
ASAN=$(gcc -print-file-name=libasan.so)
[ -e "$ASAN" ] || skip "no libasan for this gcc"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1
SAN_ENV=(env SPLITFS_ROOT="$SFS_MNT" LD_PRELOAD="$ASAN:$SAN")
san() { "${SAN_ENV[@]}" "$@"; }
rc=0
reported() { grep -qE "AddressSanitizer|runtime error:|LeakSanitizer" "$1"; }

for t in "$SFS_TESTBIN"/*; do
	name=$(basename "$t")
	[ "$name" = errno_diff ] && continue
	d=$WORK/$name
	mkdir -p "$d"
	# A hang fails the test, not the whole run (a child forked while a
	# thread allocated inherited the sanitizer allocator's lock held:
	# threads.h, sfs_threads_fork_prepare).
	timeout -k 5 300 "${SAN_ENV[@]}" "$t" "$d" >"$d.log" 2>&1
	r=$?
	if [ $r = 0 ] && ! reported "$d.log"; then
		echo "ok   $name"
	elif [ $r = 77 ]; then
		echo "skip $name"
	elif [ $r = 124 ] || [ $r = 137 ]; then
		echo "FAIL $name: no end after 300 s (hung)"
		rc=1
	else
		echo "FAIL $name (exit $r)"
		tail -n 30 "$d.log"
		rc=1
	fi
done

mkdir -p "$WORK/errno-kernel" "$WORK/errno-san"
"$SFS_TESTBIN/errno_diff" "$WORK/errno-kernel" --run >"$WORK/errno-kernel.out" 2>/dev/null
san "$SFS_TESTBIN/errno_diff" "$WORK/errno-san" --run >"$WORK/errno-san.out" 2>"$WORK/errno-san.err"
if diff "$WORK/errno-kernel.out" "$WORK/errno-san.out" >"$WORK/errno.diff" && ! reported "$WORK/errno-san.err"; then
	echo "ok   errno battery ($(wc -l <"$WORK/errno-kernel.out") probes)"
else
	echo "FAIL errno battery"
	head -n 20 "$WORK/errno.diff" "$WORK/errno-san.err"
	rc=1
fi

FSX=$(command -v fsx || echo "$HOME/.cargo/bin/fsx")
if [ -x "$FSX" ]; then
	san "$FSX" -f "$ROOT/tests/fsx/nomap.toml" -N "${SAN_FSX_OPS:-20000}" -S 7 -P "$WORK" "$WORK/fsx.dat" >"$WORK/fsx.log" 2>&1
	r=$?
	if [ $r = 0 ] && ! reported "$WORK/fsx.log"; then
		echo "ok   fsx ${SAN_FSX_OPS:-20000} ops"
	else
		echo "FAIL fsx (exit $r)"
		grep -E "Sanitizer|runtime error|ERROR" "$WORK/fsx.log" | head -n 20
		rc=1
	fi
fi
exit $rc
