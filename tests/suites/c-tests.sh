#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every C test (tests/c/*.c), first on the plain kernel file system (the test
# itself must be right), then under SplitFS in each consistency mode.
# A test is named by its program (tests/c/NAME.c): `tests/run.sh c-tests
# fork_hold` runs that one. Knobs: CTESTS_KERNEL=0 leaves out the kernel's
# runs (the lab's bounded DAX run: the host's c-tests have checked every test
# on the kernel), SFS_TEST_SCALE (a factor in (0, 1]: the long tests' rounds).
. "$(dirname "$0")/../lib.sh"
names=()
for t in "$SFS_TESTBIN"/*; do names+=("$(basename "$t")"); done
sfs_tests "${names[@]}"
rc=0
for t in "$SFS_TESTBIN"/*; do
	name=$(basename "$t")
	wanted "$name" || continue
	hows="$MODES"
	[ "${CTESTS_KERNEL:-1}" = 0 ] || hows="kernel $hows"
	for how in $hows; do
		d=$WORK/$name.$how
		mkdir -p "$d"
		t0=$(date +%s%N)
		if [ $how = kernel ]; then "$t" "$d"; else SPLITFS_MODE=$how sfs_run "$t" "$d"; fi
		r=$?
		took=$((($(date +%s%N) - t0) / 10000000))
		took=$(printf '%d.%02ds' $((took / 100)) $((took % 100)))
		case $r in
		0) echo "ok   $name ($how) $took" ;;
		77) echo "skip $name ($how)" ;;
		*) echo "FAIL $name ($how): exit $r after $took"; rc=1 ;;
		esac
	done
done
exit $rc
