#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pjdfstest (the Rust pjdfstest 0.2.2): POSIX semantics of the namespace and
# metadata calls, first on the plain XFS image ($WORK/kernel), then under
# SplitFS in each consistency mode of $SFS_MODES ($WORK/splitfs, /sync,
# /strict, inside the managed root). The tmpfs image is the
# secondary file system (the EXDEV tests). Passes when SplitFS passes as many
# tests as the kernel and fails none.
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=${CARGO_HOME:-$HOME/.cargo}/bin:$PATH
command -v pjdfstest >/dev/null 2>&1 || skip "pjdfstest not installed (tests/deps.sh installs it)"
: "${SFS_MNT2:?run through tests/run.sh}"
# As root, pjdfstest switches to these users (tests/deps.sh creates "tests").
for u in nobody tests; do
	id "$u" >/dev/null 2>&1 || skip "no user $u (tests/deps.sh creates it)"
done
getent group nogroup >/dev/null || skip "no group nogroup"

ART=${SFS_TEST_OUT:-$ROOT/tests/output}/pjdfstest
rm -rf "$ART"
mkdir -p "$ART"
cfg=$ART/pjdfstest.toml
# allow_remount stays off: the ro remount (erofs tests) is always EBUSY while
# the library keeps staging files open on the image, and flaky even without.
cat >"$cfg" <<'EOF'
[features]
posix_fallocate = {}
utime_now = {}
utimensat = {}
rename_ctime = {}

[settings]
naptime = 0.01
allow_remount = false

[dummy_auth]
entries = [
  ["nobody", "nogroup"],
  ["tests", "tests"],
]
EOF

export NO_COLOR=1
# run HOW: runs pjdfstest, prints its summary line, sets P_<HOW> and F_<HOW>.
run() {
	local how=$1 dir=$WORK/$1 log=$ART/$1.log t0 t1 r
	mkdir -p "$dir"
	t0=$(date +%s.%N)
	case $how in
	kernel) pjdfstest -c "$cfg" -p "$dir" -s "$SFS_MNT2" >"$log" 2>&1 ;;
	splitfs) SPLITFS_STATS=1 sfs_run pjdfstest -c "$cfg" -p "$dir" -s "$SFS_MNT2" >"$log" 2>&1 ;;
	*) SPLITFS_MODE=$how SPLITFS_STATS=1 sfs_run pjdfstest -c "$cfg" -p "$dir" -s "$SFS_MNT2" \
		>"$log" 2>&1 ;;
	esac
	r=$?
	t1=$(date +%s.%N)
	local sum
	sum=$(grep -E '^Summary: ' "$log" | tail -n 1)
	printf '%-8s exit %d, %.1fs: %s\n' "$how" "$r" "$(echo "$t1 - $t0" | bc)" "${sum:-no summary line}"
	local failed passed
	failed=$(sed -nE 's/^Summary: ([0-9]+) failed.*/\1/p' <<<"$sum")
	passed=$(sed -nE 's/.* ([0-9]+) passed.*/\1/p' <<<"$sum")
	eval "F_$how=\${failed:--1} P_$how=\${passed:--1}"
	if [ "${failed:--1}" != 0 ] || [ $r -ne 0 ]; then
		echo "---- failures ($how; full log $log) ----"
		# A failed test is "NAME   FAILED" followed by its message.
		grep -E -A2 '[[:space:]]FAILED$' "$log" | grep -v '^Backtrace:' | head -n 150 |
			sed 's/^/    /'
		echo "----"
	fi
	if [ "$how" != kernel ] && ! grep -q '^splitfs stats:' "$log"; then
		echo "the library printed no stats: was it loaded?"
		eval "F_$how=-1"
	fi
}

run kernel
[ "$F_kernel" = 0 ] || die "pjdfstest fails on the plain kernel file system ($F_kernel failed): the test setup is wrong"
rc=0
for how in $MODES; do
	[ "$how" = posix ] && how=splitfs
	run "$how"
	eval "f=\$F_$how p=\$P_$how"
	if [ "$f" != 0 ]; then
		echo "FAIL pjdfstest under SplitFS ($how): $f failed"; rc=1
	elif [ "$p" != "$P_kernel" ]; then
		echo "FAIL pjdfstest under SplitFS ($how) passed $p tests, the kernel $P_kernel"; rc=1
	else
		echo "ok   SplitFS ($how) passes the same $p tests as the kernel, none failed"
	fi
done
exit $rc
