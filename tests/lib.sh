# SPDX-License-Identifier: Apache-2.0
# Sourced by the suites. Provides:
#   sfs_run CMD...        run CMD under SplitFS (POSIX mode unless SPLITFS_MODE is set)
#   MODES                 the consistency modes a suite runs in (SFS_MODES, default all three)
#   WORK                  a fresh directory on the XFS image for this suite
#   die MSG / skip MSG    fail or skip the suite with a reason
set -u
: "${SFS_MNT:?run through tests/run.sh}"
sfs_run() { "$SFS_CLI" run --root "$SFS_MNT" -- "$@"; }
MODES=${SFS_MODES:-posix sync strict}
die() { echo "FAIL: $*"; exit 1; }
skip() { echo "skipped: $*"; exit 77; }
WORK=$SFS_MNT/$(basename "$0" .sh).$$
mkdir -p "$WORK"
