#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# POSIX mode with the log serving small fdatasyncs (SPLITFS_LOGSYNC=1, the
# default) against without (SPLITFS_LOGSYNC=0), one build, alternating, the
# kernel in every run. Results in /tmp/abl/W.SIDE.ROUND.
#   ab.sh W1,W2 [ROUNDS]
W=$1
REPS=${2:-3}
mkdir -p /tmp/abl
for r in $(seq 1 "$REPS"); do
	for side in off on; do
		v=0
		[ $side = on ] && v=1
		(cd "$(dirname "$0")/../../.." && SPLITFS_LOGSYNC=$v BENCH_OUT=/tmp/abl/$W.$side.$r \
			BENCH_MNT=/tmp/splitfs-bench-ab bench/run.sh --only "$W" --configs kernel,posix \
			--reps 1 >/tmp/abl/$W.$side.$r.log 2>&1)
	done
done
