#!/usr/bin/env bash
# Table 1's appends (bench/src/overhead.c: 1 GiB in 4 KiB writes to a fresh
# file, no fsync, relinked at the close) by build, the builds rotated each
# round, 4 s of rest before each run (this host's balloon reports memory
# freed by the run before: the state in which the relink's pieces copied
# slowly). One line a run: the mean append, the relink's time and the
# steps the pieces went down (the library's statistics).
#   adapt.sh MNT ROUNDS kernel|LABEL=LIB.so ...
set -eu
mnt=$1 rounds=$2
shift 2
cd "$(dirname "$0")/../../.."
for r in $(seq "$rounds"); do
	set -- "${@:2}" "$1" # rotate
	for cfg in "$@"; do
		label=${cfg%%=*} lib=${cfg#*=} st=/tmp/adapt-stats.$$
		d=$mnt/a.$label
		rm -rf "$d" "$st"
		mkdir -p "$d"
		sync -f "$mnt"
		echo 3 >/proc/sys/vm/drop_caches
		sleep 4
		pre=()
		[ "$label" = kernel ] || pre=(env SPLITFS_ROOT="$mnt" LD_PRELOAD="$(readlink -f "$lib")" SPLITFS_STATS=1 SPLITFS_STATS_FILE="$st")
		mean=$("${pre[@]}" build/bench/overhead "$d" 1024 65536 2048 |
			sed -n 's/.*"append_4k_mean_ns","value":\([0-9.]*\).*/\1/p')
		rl=$(awk '$2 == "relink_ns" {printf "%.0f", $3 / 1e6}' "$st" 2>/dev/null || true)
		low=$(awk '$2 == "relink_pieces_lowered" {print $3}' "$st" 2>/dev/null || true)
		echo "round $r $label append_mean_ns $mean relink_ms ${rl:--} lowered ${low:-0}"
		rm -rf "$d" "$st"
	done
done
