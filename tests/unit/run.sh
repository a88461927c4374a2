#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the unit tests (tests/unit/*.c with a main, built by `make check`
# into $SFS_UNIT_DIR, default build/unit): all of them, or those named as
# arguments (`make check NAMES="options crc32c"`). Each runs under a timeout ($SFS_UNIT_TIMEOUT s,
# default 60) and exits 0 pass, 1 fail, 77 skip; its own lines say what it
# checked. A name with no program but a script tests/unit/NAME.sh runs the
# script (layering.sh: it reads the library's objects in $SFS_BUILD).
# Prints PASS/FAIL/SKIP/TIMEOUT per test and a summary; exits 1 if any test
# failed or timed out (or none was found), else 0.
set -u
dir=${SFS_UNIT_DIR:-build/unit}
limit=${SFS_UNIT_TIMEOUT:-60}
# Under SANITIZE=undefined a report ends the test (and fails it).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ $# -eq 0 ]; then
	for f in $(grep -l '^U_MAIN(' tests/unit/*.c) tests/unit/layering.sh; do
		set -- "$@" "$(basename "${f%.*}")"
	done
fi
pass=0 skip=0 failed=""
for name in "$@"; do
	bin=$dir/$name
	[ ! -x "$bin" ] && [ -x "tests/unit/$name.sh" ] && bin=tests/unit/$name.sh
	if [ ! -x "$bin" ]; then
		echo "FAIL    $name (no $bin: make check builds it)"
		failed="$failed $name"
		continue
	fi
	start=$(date +%s.%N)
	timeout -k 5 "$limit" "$bin" 2>&1
	rc=$?
	secs=$(echo "$start $(date +%s.%N)" | awk '{ printf "%.2f", $2 - $1 }')
	case $rc in
	0) echo "PASS    $name (${secs}s)"; pass=$((pass + 1)) ;;
	77) echo "SKIP    $name (${secs}s)"; skip=$((skip + 1)) ;;
	124 | 137) echo "TIMEOUT $name (over ${limit}s)"; failed="$failed $name" ;;
	*) echo "FAIL    $name (exit $rc, ${secs}s)"; failed="$failed $name" ;;
	esac
done
set -- $failed
echo "unit tests: $pass passed, $skip skipped, $# failed"
if [ $# -gt 0 ]; then
	echo "Tests failed ($#):$failed"
	exit 1
fi
exit 0
