#!/usr/bin/env bash
# Table 1's appends (bench/src/overhead.c: 4 KiB writes to a fresh file, no
# fsync) by the size of the relink's copy pieces: the mean append and the
# relink's time (its stats) per configuration, the configurations rotated
# each round. A build per piece size, made from the tree with
#   sed -i 's|^#define COPY_CHUNK_REPORTED .*|#define COPY_CHUNK_REPORTED ((int64_t)16 << 10)|' src/relink/copy.c
#   make BUILD=/tmp/var/b16 /tmp/var/b16/libsplitfs.so
# (then the file restored); this host reports free memory, so the
# library copies in COPY_CHUNK_REPORTED pieces.
#   pieces.sh MNT FILE_MiB ROUNDS kernel|LABEL=LIB.so ...
set -eu
mnt=$1 file=$2 rounds=$3
shift 3
cd "$(dirname "$0")/../../.."
for r in $(seq "$rounds"); do
	set -- "${@:2}" "$1" # rotate
	for cfg in "$@"; do
		label=${cfg%%=*} lib=${cfg#*=} st=/tmp/pieces-stats.$$
		d=$mnt/p.$label
		rm -rf "$d" "$st"
		mkdir -p "$d"
		sync -f "$mnt"
		echo 3 >/proc/sys/vm/drop_caches
		pre=()
		[ "$label" = kernel ] || pre=(env SPLITFS_ROOT="$mnt" LD_PRELOAD="$(readlink -f "$lib")" SPLITFS_STATS=1 SPLITFS_STATS_FILE="$st")
		mean=$("${pre[@]}" build/bench/overhead "$d" "$file" 65536 2048 |
			sed -n 's/.*"append_4k_mean_ns","value":\([0-9.]*\).*/\1/p')
		rl=$(awk '$2 == "relink_ns" {printf "%.1f", $3 / 1e6}' "$st" 2>/dev/null || true)
		echo "round $r $label append_mean_ns $mean relink_ms ${rl:--}"
		rm -rf "$d" "$st"
	done
done
