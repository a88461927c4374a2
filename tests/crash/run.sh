#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Crash points (tests/crash/README.md). For each mode, POINTS times: start
# a workload under SplitFS on ROOT, crash it after a random delay, run
# `splitfs recover`, then check what the file system holds against the
# workload's acknowledgements (without the library).
#
#   tests/crash/run.sh ROOT [POINTS] [kill|power]
#
# kill: SIGKILL of the workload. power: the XFS file system at ROOT (an
# image made by `splitfs image up`) is shut down (xfs_io shutdown -f), the
# workload killed, and the image mounted again (log recovery): what was in
# the page cache and not written back is lost. The log is flushed first, so
# the state is one a power cut right after a log write leaves; without -f
# the plain kernel itself loses fsynced appends now and then (a shutdown
# racing fsync's log force: measured, 1 run in 15), which is not a state a
# power cut can produce. Power cuts at any moment: tests/suites/powercut.sh.
#
# Environment: SFS_CLI, SFS_BUILD (the built tree), CRASH_MODES (default
# "posix sync strict"; "strict+posix" runs a workload in each mode at once,
# on different files, crashed together), CRASH_WORKLOADS (default "append overwrite mixed
# sqlite nosync truncate threads"), CRASH_SEED (first seed, default 1), CRASH_NATIVE=1 (run the
# workloads without SplitFS: the harness itself on the plain kernel; check
# them as posix), CRASH_OUT (where failing
# points keep their files, default /tmp/splitfs-crash). Prints one line per
# failing point and a summary per mode; exits 1 on any violation.
set -u
ROOT=$1
POINTS=${2:-200}
KIND=${3:-kill}
HERE=$(cd "$(dirname "$0")" && pwd)
: "${SFS_BUILD:=$HERE/../../build}"
: "${SFS_CLI:=$SFS_BUILD/splitfs}"
TOOL=$SFS_BUILD/crash/crashtool
SQL=$HERE/sqlwork.py
PY=/usr/bin/python3
MODES=${CRASH_MODES:-posix sync strict}
WORKLOADS=(${CRASH_WORKLOADS:-append overwrite mixed sqlite nosync truncate threads overthreads})
SEED=${CRASH_SEED:-1}
OUT=${CRASH_OUT:-/tmp/splitfs-crash}
[ -x "$TOOL" ] || { echo "crash: $TOOL not built (make tests)"; exit 2; }
if [ "$KIND" = power ]; then
	IMG=$(sed -n 's/^backing=//p' "$ROOT/.splitfs/image" 2>/dev/null)
	[ -f "$IMG" ] || { echo "crash: $ROOT is not an image made by 'splitfs image up'"; exit 2; }
	command -v xfs_io >/dev/null || { echo "crash: xfs_io missing (xfsprogs)"; exit 2; }
fi
T=$(mktemp -d /tmp/sfs-crash.XXXXXX)
trap 'rm -rf "$T"' EXIT
rm -rf "$OUT"
rc=0
for mode in $MODES; do
	fails=0 acked=0 rec_max=0 rec_sum=0 rec_n=0 records=0
	declare -A per=()
	for ((i = 0; i < POINTS; i++)); do
		# A mode "strict+posix" runs one workload in each mode at once, on
		# different files, killed together: each must keep its guarantees.
		IFS=+ read -r -a wmodes <<<"$mode"
		pids=() delay=0
		for j in "${!wmodes[@]}"; do
			wl[j]=${WORKLOADS[(i + j) % ${#WORKLOADS[@]}]}
			seed=$((SEED + i))
			d[j]=$ROOT/crash.$mode.$i.$j
			ack[j]=$T/ack.$j
			rm -rf "${d[j]}" "${ack[j]}"
			mkdir -p "${d[j]}"
			if [ "${wl[j]}" = sqlite ]; then
				cmd=("$PY" "$SQL" run "${d[j]}" "${ack[j]}" "$seed")
				delay=$((delay > 0 ? delay : 100 + RANDOM % 700))
			else
				cmd=("$TOOL" run "${wl[j]}" "${d[j]}" "${ack[j]}" "$seed")
			fi
			# splitfs run execs the workload: $! is the workload itself.
			if [ "${CRASH_NATIVE:-0}" = 1 ]; then # the harness on the plain kernel
				"${cmd[@]}" >"$T/run.out.$j" 2>&1 &
			else
				SPLITFS_MODE=${wmodes[j]} "$SFS_CLI" run --root "$ROOT" -- "${cmd[@]}" \
					>"$T/run.out.$j" 2>&1 &
			fi
			pids+=($!)
		done
		[ $delay -gt 0 ] || delay=$((5 + RANDOM % 300))
		sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
		cut_ns=
		if [ "$KIND" = power ]; then
			xfs_io -x -c "shutdown -f" "$ROOT" || echo "crash: shutdown of $ROOT failed"
			cut_ns=$(date +%s%N)
		fi
		kill -9 "${pids[@]}" 2>/dev/null
		wait "${pids[@]}" 2>/dev/null
		if [ "$KIND" = power ]; then
			# A workload's child dies with it, a moment later.
			for ((try = 0; try < 50; try++)); do
				umount "$ROOT" 2>/dev/null && break
				sleep 0.1
			done
			mount -o loop "$IMG" "$ROOT" || { echo "crash: cannot mount $IMG again"; exit 2; }
		fi
		if ! "$SFS_CLI" recover --root "$ROOT" >"$T/recover.out" 2>&1; then
			echo "FAIL $mode #$i (seed $seed): recovery failed: $(tail -n 2 "$T/recover.out")"
			fails=$((fails + 1))
		fi
		# "... N records replayed ... X ms"
		read -r r ms < <(sed -nE 's/.* ([0-9]+) records replayed.* ([0-9.]+) ms$/\1 \2/p' "$T/recover.out")
		if [ -n "${ms:-}" ]; then
			records=$((records + r))
			rec_n=$((rec_n + 1))
			rec_sum=$(echo "$rec_sum + $ms" | bc)
			rec_max=$(echo "if ($ms > $rec_max) $ms else $rec_max" | bc)
		fi
		for j in "${!wmodes[@]}"; do
			[ -s "${ack[j]}" ] && acked=$((acked + 1))
			if [ "${wl[j]}" = sqlite ]; then
				"$PY" "$SQL" check "${d[j]}" "${ack[j]}" "${wmodes[j]}" "$KIND" >"$T/check.out" 2>&1
			else
				CRASH_CUT_NS=$cut_ns "$TOOL" check "${wl[j]}" "${d[j]}" "${ack[j]}" \
					"${wmodes[j]}" "$KIND" >"$T/check.out" 2>&1
			fi
			c=$?
			per[${wl[j]}]=$((${per[${wl[j]}]:-0} + 1))
			if [ $c -ne 0 ]; then
				fails=$((fails + 1))
				echo "FAIL $mode #$i: ${wl[j]} in ${wmodes[j]} mode (seed $seed, $KIND after ${delay} ms):"
				sed 's/^/    /' "$T/check.out" | head -n 20
				mkdir -p "$OUT/$mode.$i.$j"
				cp -a "${d[j]}" "${ack[j]}" "$T/run.out.$j" "$T/recover.out" "$OUT/$mode.$i.$j/" 2>/dev/null
			fi
			rm -rf "${d[j]}"
		done
	done
	avg=$( [ $rec_n -gt 0 ] && echo "scale=2; $rec_sum / $rec_n" | bc || echo 0)
	dist=""
	for w in "${!per[@]}"; do dist="$dist $w=${per[$w]}"; done
	printf '%-12s %s: %d crash points (%d workloads with acknowledged work;%s): %d violations; recovery: %d records replayed, %.2f ms mean, %.2f ms max\n' \
		"$mode" "$KIND" "$POINTS" "$acked" "$dist" "$fails" "$records" "$avg" "$rec_max"
	[ $fails -eq 0 ] || rc=1
	unset per
done
[ $rc -eq 0 ] || echo "failing points kept in $OUT"
exit $rc
