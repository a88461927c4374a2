#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The process-start study of table.md: the kernel and two builds of the
# library, alternating, REPS rounds, on a mounted image.
#   start.sh MNT BEFORE.so AFTER.so [REPS]
# Run from the repository root after `make all bench-progs`. Per round and
# configuration: posix_spawn + wait of /bin/true (1000) and of cp of a
# small file (500) from bench/src/spawn.c, fork + exec of /bin/true from a
# sh loop (500), and the utils script (wc, cp, grep, cat over 200 files of
# a bench/src/mktree.c tree: 800 commands).
set -eu
mnt=$1 before=$2 after=$3 reps=${4:-5}
bin=$PWD/build/bench
d=$mnt/start-study
rm -rf "$d"
mkdir -p "$d/out"
"$bin/mktree" "$d/tr" 3000 100 64 >/dev/null
cd "$d/tr"
list=$(find . -type f | LC_ALL=C sort | sed -n 1,200p)
script='n=0; for f in "$@"; do n=$((n + 1)); wc -c < "$f"; cp "$f" "$0/$n"; grep -c e "$f" || true; cat "$f" > /dev/null; done'
first=$(echo "$list" | sed -n 1p)
median() { grep -o '"spawn_us","value":[0-9.]*' | cut -d: -f2; }
for r in $(seq "$reps"); do
	for v in kernel before after; do
		case $v in
		kernel) run=() ;;
		before) run=(env SPLITFS_ROOT="$mnt" LD_PRELOAD="$before") ;;
		after) run=(env SPLITFS_ROOT="$mnt" LD_PRELOAD="$after") ;;
		esac
		t=$("${run[@]}" "$bin/spawn" "$d" 1000 /bin/true | median)
		c=$("${run[@]}" "$bin/spawn" "$d/tr" 500 /bin/cp "$first" "$d/out/x" | median)
		a=$(date +%s%N)
		"${run[@]}" sh -c 'i=0; while [ $i -lt 500 ]; do /bin/true; i=$((i+1)); done'
		b=$(date +%s%N)
		"${run[@]}" sh -c "$script > /dev/null" "$d/out" $list
		e=$(date +%s%N)
		echo "$r $v spawn_true_us=$t spawn_cp_us=$c sh_fork_exec_us=$(((b - a) / 500000)) script_ms=$(((e - b) / 1000000))"
	done
done
rm -rf "$d"
