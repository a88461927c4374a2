#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fsx (the Rust fsx-rs 0.3.2) under SplitFS on the XFS image. Every seed runs
# two configs (tests/fsx/):
#   nomap    reads, writes (appends), truncates, fsync/fdatasync, punch hole,
#            posix_fallocate, sendfile, copy_file_range, fadvise, close/open:
#            the library serves the file for the whole run
#   full     the same plus rare mapread/mapwrite/invalidate: the library
#            demotes the file to the kernel at the first map operation, at a
#            seed-dependent point well into the run
# then the first seed again with SPLITFS_RELINK=exchange, =copy and =clone,
# with tiny map chunks and staging files (nomap: every chunk boundary and
# staging rollover path), a 16 MiB file with operations up to 1 MiB (big), a
# short run of the map-heavy config (mapheavy: demotion right after the first
# writes), the first seed in each other consistency mode of $SFS_MODES
# (nomap, full, big), and the first seed natively on the same image, for
# comparison.
#
# Knobs: FSX_SEEDS (default "1 2 3"), FSX_OPS (operations per nomap/full run,
# default 100000), FSX_FULL_OPS (operations of the mapheavy runs, default
# 20000), FSX_BIG_OPS (operations of the big runs, default 20000), FSX_JOBS
# (runs at once, default one per CPU: each fsx is one process on its own
# file; the rows print in the order above whichever ends first). Artifacts
# (.fsxgood/.fsxbad, per-run logs) go to $SFS_TEST_OUT/fsx/ (default
# tests/output/fsx/).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CFG=$ROOT/tests/fsx
export PATH=${CARGO_HOME:-$HOME/.cargo}/bin:$PATH
command -v fsx >/dev/null 2>&1 || skip "fsx not installed (tests/deps.sh installs it)"

SEEDS=${FSX_SEEDS:-1 2 3}
OPS=${FSX_OPS:-100000}
FULL_OPS=${FSX_FULL_OPS:-20000}
BIG_OPS=${FSX_BIG_OPS:-20000}
ART=${SFS_TEST_OUT:-$ROOT/tests/output}/fsx
rm -rf "$ART"
mkdir -p "$ART"
first=${SEEDS%% *}
JOBS=${FSX_JOBS:-$(nproc)}
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "FSX_JOBS=$JOBS: want a number of runs at once (>= 1)"

# run_fsx NAME HOW CONFIG OPS SEED [VAR=VALUE...]; HOW is splitfs or kernel.
# Prints the run's row (and on failure the tail of its log); its exit status
# is the run's.
run_fsx() {
	local name=$1 how=$2 cfg=$3 ops=$4 seed=$5
	shift 5
	local file=$WORK/$name.dat log=$ART/$name.log art=$ART/$name
	mkdir -p "$art"
	local t0 t1 r
	t0=$(date +%s.%N)
	if [ "$how" = kernel ]; then
		env "$@" fsx -f "$CFG/$cfg.toml" -N "$ops" -S "$seed" -P "$art" "$file" >"$log" 2>&1
	else
		env SPLITFS_STATS=1 "$@" "$SFS_CLI" run --root "$SFS_MNT" -- \
			fsx -f "$CFG/$cfg.toml" -N "$ops" -S "$seed" -P "$art" "$file" >"$log" 2>&1
	fi
	r=$?
	t1=$(date +%s.%N)
	local secs result lib=-
	secs=$(printf '%.1f' "$(echo "$t1 - $t0" | bc)")
	if [ $r -eq 0 ] && grep -q 'All operations completed A-OK' "$log"; then
		result=ok
	else
		result="FAIL(exit $r)"
	fi
	if [ "$how" = splitfs ]; then
		# The stats the library prints at exit prove it was loaded.
		if grep -q '^splitfs stats:' "$log"; then
			lib=$(awk '/^event relink_exchange /{x+=$3} /^event relink_clone /{c+=$3}
				/^event relink_copy /{y+=$3} /^event demotions /{d+=$3}
				END{printf "relinks exch/clone/copy %d/%d/%d, demotions %d", x, c, y, d}' "$log")
		else
			lib="library not loaded?"
			[ "$result" = ok ] && result="FAIL(no splitfs stats)"
		fi
	fi
	printf '%-24s %-8s %6s %8s %8s  %s\n' "$name" "$seed" "$ops" "$secs" "$result" "$lib"
	rm -f "$file"
	[ "$result" = ok ] && return 0
	echo "---- tail of $log (artifacts in $art) ----"
	tail -n 60 "$log" | sed 's/^/    /'
	echo "----"
	return 1
}

# start NAME ...: run_fsx in the background once fewer than $JOBS run; its
# report goes to $ART/NAME.row, its failure to $ART/NAME.failed.
names=()
trap 'kill $(jobs -p) 2>/dev/null; exit 143' TERM INT
start() {
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	names+=("$1")
	{ run_fsx "$@" >"$ART/$1.row" || : >"$ART/$1.failed"; } &
}

for seed in $SEEDS; do
	start "nomap-s$seed" splitfs nomap "$OPS" "$seed"
	start "full-s$seed" splitfs full "$OPS" "$seed"
done
for relink in exchange copy clone; do
	start "nomap-s$first-$relink" splitfs nomap "$OPS" "$first" SPLITFS_RELINK=$relink
	start "full-s$first-$relink" splitfs full "$OPS" "$first" SPLITFS_RELINK=$relink
done
start "nomap-s$first-tiny" splitfs nomap "$OPS" "$first" \
	SPLITFS_MAP_SIZE=16K SPLITFS_STAGING_SIZE=64K SPLITFS_STAGING_FILES=1
# The other consistency modes (sync, strict: every write through the log).
for m in $MODES; do
	[ "$m" = posix ] && continue
	start "nomap-s$first-$m" splitfs nomap "$OPS" "$first" SPLITFS_MODE=$m
	start "full-s$first-$m" splitfs full "$OPS" "$first" SPLITFS_MODE=$m
	start "big-s$first-$m" splitfs big "$BIG_OPS" "$first" SPLITFS_MODE=$m
done
start "big-s$first" splitfs big "$BIG_OPS" "$first"
start "mapheavy-s$first" splitfs mapheavy "$FULL_OPS" "$first"
start "native-nomap-s$first" kernel nomap "$OPS" "$first"
start "native-big-s$first" kernel big "$BIG_OPS" "$first"
start "native-full-s$first" kernel full "$OPS" "$first"
start "native-mapheavy-s$first" kernel mapheavy "$FULL_OPS" "$first"

wait
rc=0
printf '%-24s %-8s %6s %8s %8s  %s\n' run seed ops seconds result library
for n in "${names[@]}"; do
	if [ -s "$ART/$n.row" ]; then cat "$ART/$n.row"; else echo "$n: no report (killed?)"; rc=1; fi
	[ ! -e "$ART/$n.failed" ] || rc=1
done
[ $rc -eq 0 ] || die "fsx failed (see above; logs and artifacts in $ART)"
echo "all ${#names[@]} fsx runs passed ($JOBS at once)"
