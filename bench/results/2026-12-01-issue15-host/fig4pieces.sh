#!/usr/bin/env bash
# Fig. 4 (bench/src/fig4.c, 128 MiB) by relink piece size, the builds of
# pieces.sh, rotated each round; one line per pattern and build, ns/op.
#   fig4pieces.sh MNT ROUNDS LABEL=LIB.so ...
set -eu
mnt=$1 rounds=$2
shift 2
cd "$(dirname "$0")/../../.."
for r in $(seq "$rounds"); do
	set -- "${@:2}" "$1"
	for cfg in "$@"; do
		label=${cfg%%=*} lib=$(readlink -f "${cfg#*=}")
		d=$mnt/f.$label
		rm -rf "$d"
		mkdir -p "$d"
		sync -f "$mnt"
		echo 3 >/proc/sys/vm/drop_caches
		SPLITFS_ROOT=$mnt LD_PRELOAD=$lib build/bench/fig4 "$d" 128 |
			sed -n 's/.*"metric":"\([a-z_0-9]*\)","value":\([0-9.]*\).*/\1 \2/p' |
			while read -r m v; do echo "round $r $label $m $v"; done
		rm -rf "$d"
	done
done
