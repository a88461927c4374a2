#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Thread and process scaling (FxMark data workloads, bench/src/fxmark.c) of
# the kernel and of one or more library builds side by side, alternating per
# point, on a file system already mounted at DIR (a machine without
# mkfs.xfs can loop-mount an image made here by `splitfs image up`).
#
#   bench/scaling.sh DIR [LABEL=LIB.so ...]   (default after=build/libsplitfs.so)
#   env: FXMARK_WORKERS ("1 2 4 8 16"), FXMARK_WORKLOADS ("DRBL DRBM DWOL DWOM
#        DWAL DOCL"), FXMARK_HOW ("threads procs"), SECONDS_PER_POINT (1), REPS (1)
#
# Prints one "label {json}" line per point, then a markdown table of
# medians and ratios to the kernel.
set -u
cd "$(dirname "$0")/.."
dir=$1; shift
[ $# -gt 0 ] || set -- after=build/libsplitfs.so
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for rep in $(seq "${REPS:-1}"); do
	for w in ${FXMARK_WORKERS:-1 2 4 8 16}; do
		for how in ${FXMARK_HOW:-threads procs}; do
			for k in ${FXMARK_WORKLOADS:-DRBL DRBM DWOL DWOM DWAL DOCL}; do
				for cfg in kernel "$@"; do
					label=${cfg%%=*} lib=${cfg#*=}
					case $lib in /*) ;; *) lib=$PWD/$lib ;; esac
					mkdir -p "$dir/fx"
					if [ "$cfg" = kernel ]; then
						build/bench/fxmark "$dir/fx" $k $w $how "${SECONDS_PER_POINT:-1}"
					else
						SPLITFS_ROOT=$dir LD_PRELOAD=$lib \
							build/bench/fxmark "$dir/fx" $k $w $how "${SECONDS_PER_POINT:-1}"
					fi | sed "s/^/$label /" | tee -a "$raw"
					rm -rf "$dir/fx"
				done
			done
		done
	done
done
labels="kernel"
for cfg in "$@"; do labels="$labels ${cfg%%=*}"; done
python3 - "$raw" $labels <<'PY'
import collections, json, statistics, sys
vals = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    label, _, js = line.partition(" ")
    o = json.loads(js)
    if o["metric"] not in order:
        order.append(o["metric"])
    vals[(o["metric"], label)].append(o["value"])
labels = sys.argv[2:]
print("\n| point | " + " | ".join(f"{l} ops/s" for l in labels) + " | "
      + " | ".join(f"{l}/kernel" for l in labels[1:]) + " |")
print("|---" * (2 * len(labels)) + "|")
for m in order:
    med = {l: statistics.median(vals[(m, l)]) for l in labels if vals[(m, l)]}
    k = med.get("kernel")
    print(f"| {m} | " + " | ".join(f"{med.get(l, 0):.0f}" for l in labels) + " | "
          + " | ".join(f"{med[l] / k:.2f}" if k and l in med else "-" for l in labels[1:]) + " |")
PY
