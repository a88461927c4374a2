#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# errno differential test: tests/c/errno_diff.c on the plain kernel, then
# under SplitFS (default relink, then SPLITFS_RELINK=copy, then each other
# consistency mode in $SFS_MODES), all on the XFS image. Every probe line must be the same as the kernel's: result, errno,
# sizes and checksums. A run that dies, hangs (ERRNO_TIMEOUT seconds, 20 by
# default; a run takes about a second) or exits non-zero fails the suite
# too; the diff then starts at the first probe it did not get past.
. "$(dirname "$0")/../lib.sh"
bin=$SFS_TESTBIN/errno_diff
[ -x "$bin" ] || die "$bin not built (make tests)"
limit=${ERRNO_TIMEOUT:-20}

# run NAME [sfs_run]: runs the battery in $WORK/NAME (under the library with
# sfs_run), output in $WORK/NAME.out; says why when it did not exit 0.
run() {
	local name=$1
	shift
	mkdir -p "$WORK/$name"
	"$@" timeout -k 5 "$limit" "$bin" "$WORK/$name" --run >"$WORK/$name.out" 2>"$WORK/$name.err"
	local r=$?
	case $r in
	0) ;;
	124 | 137) echo "$name: hung (killed after ${limit}s)" ;;
	*) if [ $r -gt 128 ]; then echo "$name: killed by signal $((r - 128))"; else echo "$name: exit $r"; fi ;;
	esac
	[ $r = 0 ] || echo "$name: last line out: $(tail -n 1 "$WORK/$name.out")"
	[ -s "$WORK/$name.err" ] && sed "s/^/$name stderr: /" "$WORK/$name.err" | head -n 20
	return $r
}

# The tests are the SplitFS runs (splitfs, splitfs-copy, splitfs-MODE);
# the kernel's always runs, as the reference.
runs="splitfs splitfs-copy"
for m in $MODES; do [ "$m" = posix ] || runs="$runs splitfs-$m"; done
sfs_tests $runs
rc=0
run kernel || die "the probes fail on the plain kernel: fix the test"
tail -n 1 "$WORK/kernel.out" | grep -qx end || die "kernel run: output incomplete"
echo "kernel: $(wc -l <"$WORK/kernel.out") probe lines"
for name in $runs; do
	wanted $name || continue
	case $name in
	splitfs) run $name sfs_run || rc=1 ;;
	splitfs-copy) SPLITFS_RELINK=copy run $name sfs_run || rc=1 ;;
	*) SPLITFS_MODE=${name#splitfs-} run $name sfs_run || rc=1 ;;
	esac
	if diff -u "$WORK/kernel.out" "$WORK/$name.out" >"$WORK/$name.diff"; then
		echo "ok   $name: same as the kernel"
	else
		rc=1
		echo "FAIL $name: $(grep -c '^-[^-]' "$WORK/$name.diff") kernel line(s) not matched" \
			"(- kernel, + $name):"
		grep '^[-+][^-+]' "$WORK/$name.diff"
	fi
done
exit $rc
