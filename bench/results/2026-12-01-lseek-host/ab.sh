#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pgbench before and after, rounds alternating: build/libsplitfs.so is
# replaced by BEFORE, then AFTER, for each round's
# `bench/run.sh --reps 1 --only pgbench --configs posix,sync,kernel-sync`,
# and rebuilt at the end. One line a run in OUT/rounds.txt.
#   ab.sh BEFORE.so AFTER.so OUT [ROUNDS]    (from the repository's root)
set -eu
before=$1 after=$2 out=$3 rounds=${4:-3}
mkdir -p "$out"
: >"$out/rounds.txt"
for r in $(seq "$rounds"); do
	for v in before after; do
		if [ $v = before ]; then cp "$before" build/libsplitfs.so; else cp "$after" build/libsplitfs.so; fi
		BENCH_OUT=$out/$v.$r bench/run.sh --reps 1 --only pgbench --configs posix,sync,kernel-sync \
			>"$out/$v.$r.log" 2>&1
		echo "$v $r $(grep -E '^\| (tpcb|select)' "$out/$v.$r/table.md" | tr -s ' ' | tr '\n' ' ')" \
			>>"$out/rounds.txt"
	done
done
rm -f build/libsplitfs.so
make -s build/libsplitfs.so
