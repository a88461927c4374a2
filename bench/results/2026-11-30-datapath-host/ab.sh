#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A/B of two builds, alternating: the build before in /tmp/wt-old (git
# worktree add /tmp/wt-old f81f2f7; make all bench-progs there), the build
# after in /work/main. Results in /tmp/ab2/W.SIDE.ROUND.
#   ab.sh W1,W2 [ROUNDS] [CONFIGS]
W=$1
REPS=${2:-3}
CONF=${3:-kernel,posix}
for r in $(seq 1 "$REPS"); do
	for side in before after; do
		dir=/work/main
		[ $side = before ] && dir=/tmp/wt-old
		(cd $dir && BENCH_OUT=/tmp/ab2/$W.$side.$r BENCH_MNT=/tmp/splitfs-bench-ab \
			bench/run.sh --only "$W" --configs "$CONF" --reps 1 >/tmp/ab2/$W.$side.$r.log 2>&1)
	done
done
