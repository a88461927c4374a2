# SPDX-License-Identifier: Apache-2.0
# Sourced by the suites. Provides:
#   sfs_run CMD...        run CMD under SplitFS (POSIX mode unless SPLITFS_MODE is set)
#   MODES                 the consistency modes a suite runs in (SFS_MODES, default all three)
#   WORK                  a fresh directory on the XFS image for this suite
#   die MSG / skip MSG    fail or skip the suite with a reason
#   sfs_tests NAME...     the suite's tests by name (tests/run.sh SUITE TEST...)
#   wanted NAME           whether test NAME is to run
set -u
: "${SFS_MNT:?run through tests/run.sh}"
sfs_run() { "$SFS_CLI" run --root "$SFS_MNT" -- "$@"; }
MODES=${SFS_MODES:-posix sync strict}
die() { echo "FAIL: $*"; exit 1; }
skip() { echo "skipped: $*"; exit 77; }
WORK=$SFS_MNT/$(basename "$0" .sh).$$
mkdir -p "$WORK"

# `tests/run.sh SUITE TEST...` passes the TESTs in SFS_TEST_ONLY. A suite
# made of named tests declares them with sfs_tests (tests/run.sh takes that
# call as the sign that the suite honours SFS_TEST_ONLY) and runs a test
# only if `wanted NAME`. A name the suite does not have fails the suite
# before anything runs: a typo must not pass as a test that ran.
SFS_TEST_ONLY=${SFS_TEST_ONLY:-}
sfs_tests() {
	local t k ok
	for t in $SFS_TEST_ONLY; do
		ok=0
		for k; do [ "$t" = "$k" ] && ok=1 && break; done
		[ $ok = 1 ] || die "no test $t in suite $(basename "$0" .sh); tests: ${*:-(none: the suite is one test)}"
	done
	[ -z "$SFS_TEST_ONLY" ] || echo "tests: $SFS_TEST_ONLY"
}
wanted() {
	[ -z "$SFS_TEST_ONLY" ] && return 0
	case " $SFS_TEST_ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}
