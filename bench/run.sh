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
# kernel-sync, the program alone on a second image mounted `-o sync` (every
# write and, XFS's wsync, every metadata call synchronous: the kernel's
# own sync mode, the baseline of sync and strict modes);
# posix-copy / posix-exchange (relink backends) and posix-nostaging for the
# workloads that declare them; madfs, the peer library MadFS (FAST'23)
# preloaded instead of SplitFS, for the workloads that declare it, when it
# has been built into $PEERS_CACHE/madfs (bench/README.md says how). A
# configuration the library refuses (a mode not built yet), or a peer not
# built, is recorded as skipped with the reason, not faked.
#
# Workload contract: `workload.sh` runs its program(s) through "$RUN" (an
# empty prefix for kernel, `env LD_PRELOAD=.../libmadfs.so` for madfs,
# `splitfs run --root ... --` otherwise), works in $BENCH_DIR (on the
# image), sizes itself by $BENCH_SCALE (smoke, quick or full), and prints
# one JSON object per result line:
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
CONFIGS="kernel posix sync strict kernel-sync"
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
PY=$([ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
# The peer MadFS, built outside the tree (neither make nor bench/deps.sh
# builds it: bench/README.md, "Configurations").
MADFS=${PEERS_CACHE:-$HOME/.cache/splitfs-peers}/madfs/libmadfs.so

# madfs_unshm DIR...: MadFS keeps the shared state of each file it manages
# in /dev/shm/madfs_*, named by the file's xattr user.shm_path, and removes
# it only when the file is unlinked through MadFS. Remove it for the files
# under DIR (before rm -rf, which is not under MadFS, or a run that ended
# before its unlink leaves it behind).
madfs_unshm() {
	"$PY" - "$@" <<'PY'
import os, sys
for top in sys.argv[1:]:
    for d, _, files in os.walk(top):
        for f in files:
            try:
                shm = os.getxattr(os.path.join(d, f), "user.shm_path").split(b"\0")[0].decode()
            except (OSError, UnicodeDecodeError):
                continue
            if shm.startswith("/dev/shm/madfs_") and "/" not in shm[len("/dev/shm/"):]:
                try:
                    os.unlink(shm)
                except OSError:
                    pass
PY
}

if [ "${BENCH_MNT_READY:-0}" = 1 ]; then # a file system mounted already (the lab's pmem)
	mountpoint -q "$MNT" || { echo "bench/run.sh: $MNT is not mounted" >&2; exit 2; }
	trap 'madfs_unshm "$MNT"/bench.*.madfs.*' EXIT
else
	trap 'madfs_unshm "$MNT"/bench.*.madfs.*; "$CLI" image down "$MNT" >/dev/null 2>&1' EXIT
	"$CLI" image down "$MNT" >/dev/null 2>&1
	"$CLI" image up "$MNT" --size "${BENCH_IMAGE_SIZE:-6G}" >/dev/null || exit 1
fi
# kernel-sync's image: made like the other, then mounted again with -o sync
# (XFS takes wsync, synchronous metadata, only at mount time).
SMNT=$MNT-sync
sync_image() {
	[ "${BENCH_MNT_READY:-0}" = 1 ] && return 0
	[[ " $CONFIGS " == *" kernel-sync "* ]] || return 0
	local img
	trap 'madfs_unshm "$MNT"/bench.*.madfs.*; "$CLI" image down "$MNT" >/dev/null 2>&1; "$CLI" image down "$SMNT" >/dev/null 2>&1' EXIT
	"$CLI" image down "$SMNT" >/dev/null 2>&1
	"$CLI" image up "$SMNT" --size "${BENCH_IMAGE_SIZE:-6G}" >/dev/null || return 1
	img=$(sed -n 's/^backing=//p' "$SMNT/.splitfs/image")
	umount "$SMNT" && mount -o loop,sync "$img" "$SMNT" || return 1
	grep -q " $SMNT xfs .*wsync" /proc/mounts
}
sync_image || { echo "bench/run.sh: cannot mount $SMNT -o sync" >&2; exit 1; }
"$ROOT/bench/machine.sh" "$MNT" >"$OUT/machine.json"

workloads=()
for w in bench/workloads/*.sh; do
	n=$(basename "$w" .sh)
	if [ -z "$ONLY" ] || [[ ",$ONLY," == *",$n,"* ]]; then workloads+=("$n"); fi
done

# why_not CONFIG: why that configuration cannot run here; nothing if it
# can. The library refuses a mode it does not have (asked once per
# workload). A peer must be built and must load: a preload that does not
# load only warns, and the program would run on the kernel.
why_not() {
	case $1 in
	kernel) ;;
	kernel-sync)
		[ "${BENCH_MNT_READY:-0}" = 1 ] &&
			echo "the file system was mounted by the caller: no second image to mount -o sync"
		;;
	madfs)
		if [ ! -f "$MADFS" ]; then
			echo "MadFS is not built (no $MADFS; bench/README.md says how)"
		elif ! MADFS_NO_SHOW_CONFIG=1 LD_PRELOAD=$MADFS grep -q libmadfs /proc/self/maps 2>/dev/null; then
			echo "$MADFS does not load"
		fi
		;;
	*)
		SPLITFS_MODE=${1%%-*} "$CLI" run --root "$MNT" -- true 2>&1 | grep -q "not available" &&
			echo "the library does not provide this mode yet"
		;;
	esac
}

# prefix CONFIG: the command prefix that runs a program in that configuration.
prefix() {
	case $1 in
	kernel | kernel-sync) echo "" ;;
	madfs) echo "env MADFS_NO_SHOW_CONFIG=1 LD_PRELOAD=$MADFS" ;;
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
		case " ${cfgs[*]} " in *" $c "*) continue ;; esac # asked for twice
		why=$(why_not "$c")
		if [ -z "$why" ]; then
			cfgs+=("$c")
		else
			echo "{\"workload\":\"$w\",\"config\":\"$c\",\"skipped\":\"$why\"}" >>"$raw"
			echo "== $w: $c skipped: $why"
		fi
	done
	echo "== $w (${cfgs[*]}; $REPS reps, $SCALE)"
	for rep in $(seq "$REPS"); do
		# Rotate the order each repetition.
		n=${#cfgs[@]}
		for i in $(seq 0 $((n - 1))); do
			c=${cfgs[$(((i + rep) % n))]}
			base=$([ "$c" = kernel-sync ] && echo "$SMNT" || echo "$MNT")
			dir=$base/bench.$w.$c.$rep
			rm -rf "$dir"
			mkdir -p "$dir"
			# This file system's dirty data out, clean caches dropped (a
			# global sync could wait on other file systems for seconds).
			sync -f "$base"
			echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
			stats=$OUT/stats/$w.$c.$rep.txt
			RUN=$(prefix "$c") BENCH_DIR=$dir SPLITFS_STATS=$(case $c in kernel* | madfs) echo 0 ;; *) echo 1 ;; esac) \
				SPLITFS_STATS_FILE=$stats timeout -k 10 "${BENCH_TIMEOUT:-1800}" \
				bash "bench/workloads/$w.sh" 2>"$OUT/stats/$w.$c.$rep.err" |
				grep '^{' | sed "s/^{/{\"workload\":\"$w\",\"config\":\"$c\",\"rep\":$rep,/" >>"$raw"
			st=${PIPESTATUS[0]}
			[ "$st" = 0 ] || echo "{\"workload\":\"$w\",\"config\":\"$c\",\"rep\":$rep,\"failed\":$st}" >>"$raw"
			printf '   rep %d %-16s %s\n' "$rep" "$c" "$([ "$st" = 0 ] && echo ok || echo "FAILED ($st)")"
			[ "$c" = madfs ] && madfs_unshm "$dir"
			rm -rf "$dir"
		done
	done
done
"$PY" bench/report.py "$OUT"
echo "results: $OUT/table.md"
