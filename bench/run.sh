#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make bench / make bench-quick: the paper's experiments, side by side with
# the kernel file system, in one run.
#
#   bench/run.sh [--quick] [--smoke] [--reps N] [--only W1,W2] [--configs C1,C2]
#
# For every workload (bench/workloads/<name>.sh) and every configuration, on
# one freshly made XFS image, alternating configurations within each
# repetition (so drift hits all of them alike), it collects the JSON lines
# the workload prints into bench/results/<date>/raw.jsonl, with the stats
# table of every SplitFS run beside it, then writes table.md (medians and
# SplitFS / kernel ratios) and PNG plots (bench/report.py).
#
# Configurations: kernel (no library), posix, sync, strict (SPLITFS_MODE);
# posix-copy / posix-exchange (relink backends) and posix-nostaging for the
# workloads that declare them. A configuration the library refuses (a mode
# not built yet) is recorded as skipped, not faked.
#
# Workload contract: `workload.sh` runs its program(s) through "$RUN" (an
# empty prefix for kernel, `splitfs run --root ... --` otherwise), works in
# $BENCH_DIR (on the image), sizes itself by $BENCH_SCALE (smoke, quick or
# full), and prints one JSON object per result line:
#   {"metric": "...", "value": N, "unit": "ns/op", "better": "lower"}
# It may print `# configs: posix-copy posix-exchange` first to ask for
# extra configurations.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
CLI=$ROOT/build/splitfs
SCALE=full
REPS=5
ONLY=
CONFIGS="kernel posix sync strict"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) SCALE=quick; REPS=1 ;;
	--smoke) SCALE=smoke; REPS=1 ;;
	--reps) REPS=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--configs) CONFIGS=$(echo "$2" | tr , ' '); shift ;;
	*) echo "bench/run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || { echo "bench/run.sh: must run as root (it mounts an image)" >&2; exit 2; }
if [ "${BENCH_BUILT:-0}" != 1 ]; then # BENCH_BUILT=1: built already (the lab's read-only view)
	make -s all >/dev/null || exit 1
	make -s bench-progs >/dev/null || exit 1
fi

OUT=${BENCH_OUT:-$ROOT/bench/results/$(date +%Y-%m-%d-%H%M%S)}
mkdir -p "$OUT/stats"
MNT=${BENCH_MNT:-/tmp/splitfs-bench}
export BENCH_SCALE=$SCALE BENCH_BIN=$ROOT/build/bench BENCH_SRC=$ROOT/bench
if [ "${BENCH_MNT_READY:-0}" = 1 ]; then # a file system mounted already (the lab's pmem)
	mountpoint -q "$MNT" || { echo "bench/run.sh: $MNT is not mounted" >&2; exit 2; }
else
	trap '"$CLI" image down "$MNT" >/dev/null 2>&1' EXIT
	"$CLI" image down "$MNT" >/dev/null 2>&1
	"$CLI" image up "$MNT" --size "${BENCH_IMAGE_SIZE:-6G}" >/dev/null || exit 1
fi
"$ROOT/bench/machine.sh" "$MNT" >"$OUT/machine.json"

workloads=()
for w in bench/workloads/*.sh; do
	n=$(basename "$w" .sh)
	if [ -z "$ONLY" ] || [[ ",$ONLY," == *",$n,"* ]]; then workloads+=("$n"); fi
done

# The library refuses a mode it does not have: find out once per mode.
available() {
	local mode=${1%%-*}
	[ "$1" = kernel ] && return 0
	SPLITFS_MODE=$mode "$CLI" run --root "$MNT" -- true 2>&1 | grep -q "not available" && return 1
	return 0
}

# prefix CONFIG: the command prefix that runs a program in that configuration.
prefix() {
	case $1 in
	kernel) echo "" ;;
	*-copy) echo "$CLI run --root $MNT --mode ${1%%-*} --relink copy --" ;;
	*-exchange) echo "$CLI run --root $MNT --mode ${1%%-*} --relink exchange --" ;;
	*-nostaging) echo "$CLI run --root $MNT --mode ${1%%-*} --no-staging --" ;;
	*) echo "$CLI run --root $MNT --mode $1 --" ;;
	esac
}

raw=$OUT/raw.jsonl
: >"$raw"
for w in "${workloads[@]}"; do
	extra=$(grep -m1 '^# configs:' "bench/workloads/$w.sh" | sed 's/^# configs://')
	cfgs=()
	for c in $CONFIGS $extra; do
		if available "$c"; then
			cfgs+=("$c")
		else
			echo "{\"workload\":\"$w\",\"config\":\"$c\",\"skipped\":\"the library does not provide this mode yet\"}" >>"$raw"
		fi
	done
	echo "== $w (${cfgs[*]}; $REPS reps, $SCALE)"
	for rep in $(seq "$REPS"); do
		# Rotate the order each repetition.
		n=${#cfgs[@]}
		for i in $(seq 0 $((n - 1))); do
			c=${cfgs[$(((i + rep) % n))]}
			dir=$MNT/bench.$w.$c.$rep
			rm -rf "$dir"
			mkdir -p "$dir"
			# This file system's dirty data out, clean caches dropped (a
			# global sync could wait on other file systems for seconds).
			sync -f "$MNT"
			echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
			stats=$OUT/stats/$w.$c.$rep.txt
			RUN=$(prefix "$c") BENCH_DIR=$dir SPLITFS_STATS=$([ "$c" = kernel ] && echo 0 || echo 1) \
				SPLITFS_STATS_FILE=$stats timeout -k 10 "${BENCH_TIMEOUT:-1800}" \
				bash "bench/workloads/$w.sh" 2>"$OUT/stats/$w.$c.$rep.err" |
				grep '^{' | sed "s/^{/{\"workload\":\"$w\",\"config\":\"$c\",\"rep\":$rep,/" >>"$raw"
			st=${PIPESTATUS[0]}
			[ "$st" = 0 ] || echo "{\"workload\":\"$w\",\"config\":\"$c\",\"rep\":$rep,\"failed\":$st}" >>"$raw"
			printf '   rep %d %-16s %s\n' "$rep" "$c" "$([ "$st" = 0 ] && echo ok || echo "FAILED ($st)")"
			rm -rf "$dir"
		done
	done
done
PY=$([ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
"$PY" bench/report.py "$OUT"
echo "results: $OUT/table.md"
