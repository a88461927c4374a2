#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The write-ahead-log study of table.md: the kernel and two builds of the
# library, alternating, REPS rounds, on a mounted image.
#   wal.sh MNT BEFORE.so AFTER.so [REPS]
# Run from the repository root after `make all bench-progs`. Per round and
# configuration: walsync (3000 records a row) and fig4's append_fsync10
# (64 MiB: 4096 appends of 4 KiB, an fsync every 10). Prints one line per
# result: round, configuration, then the program's JSON line.
set -eu
mnt=$1 before=$2 after=$3 reps=${4:-8}
bin=$PWD/build/bench
d=$mnt/wal-study
for r in $(seq "$reps"); do
	for v in kernel before after; do
		case $v in
		kernel) run=() ;;
		before) run=(env SPLITFS_ROOT="$mnt" LD_PRELOAD="$before") ;;
		after) run=(env SPLITFS_ROOT="$mnt" LD_PRELOAD="$after") ;;
		esac
		rm -rf "$d"
		mkdir -p "$d"
		{
			"${run[@]}" "$bin/walsync" "$d" 3000
			"${run[@]}" "$bin/fig4" "$d" 64 append_fsync10 | grep append_fsync10
		} | sed "s/^/$r $v /"
	done
done
rm -rf "$d"
