#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The clean-page overwrite study of table.md: the kernel and two builds of
# the library, alternating, REPS rounds, on a mounted image.
#   ahead.sh MNT BEFORE.so AFTER.so [REPS]
# Run from the repository root after `make all bench-progs`. Per round and
# configuration: fig4's reads and overwrites (128 MiB), table1's random
# read and overwrite (bench/src/overhead.c, 256 MiB file), cleanpages
# (64 MiB) and fig3's sequential overwrites (64 MiB). Prints one line per
# result: round, configuration, then the program's JSON line.
set -eu
mnt=$1 before=$2 after=$3 reps=${4:-5}
bin=$PWD/build/bench
d=$mnt/ahead-study
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
			"${run[@]}" "$bin/fig4" "$d" 128 seq_read,seq_overwrite,rand_overwrite
			"${run[@]}" "$bin/overhead" "$d" 256 65536 1024 | grep -E '"(read|overwrite)_4k_ns"'
			"${run[@]}" "$bin/cleanpages" "$d" 64
			"${run[@]}" "$bin/fig3" "$d" 64 | grep seq_overwrite
		} | sed "s/^/$r $v /"
	done
done
rm -rf "$d"
