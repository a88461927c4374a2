#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Appends that were fsync'ed survive the writer's SIGKILL: tests/c/killwriter
# (a child appends checksummed records with fsync every few, the parent kills
# it after record K is durable plus a random delay, then checks the file
# through the library and with raw kernel reads) for DURABILITY_RUNS seeds
# (default 50; a seed picks K, the delay, the fsync grouping, fsync or
# fdatasync, O_APPEND or not), natively, under SplitFS, and under SplitFS
# with SPLITFS_RELINK=exchange (the default relink copies windows this small).
. "$(dirname "$0")/../lib.sh"
prog=$SFS_TESTBIN/killwriter
[ -x "$prog" ] || die "$prog missing (make tests)"
RUNS=${DURABILITY_RUNS:-50}
FIRST=${DURABILITY_SEED:-1}

rc=0
failed="" # the failures again, at the end, where a log's tail shows them
for how in kernel splitfs splitfs-exchange; do
	dir=$WORK/$how
	mkdir -p "$dir"
	fails=0
	t0=$(date +%s.%N)
	for ((i = 0; i < RUNS; i++)); do
		seed=$((FIRST + i))
		case $how in
		kernel) out=$("$prog" "$dir" "$seed" 2>&1) ;;
		splitfs) out=$(sfs_run "$prog" "$dir" "$seed" 2>&1) ;;
		splitfs-exchange) out=$(SPLITFS_RELINK=exchange sfs_run "$prog" "$dir" "$seed" 2>&1) ;;
		esac
		r=$?
		if [ $r -eq 0 ]; then
			echo "ok   $how $(grep '^seed ' <<<"$out")"
			grep -v '^seed ' <<<"$out" | sed 's/^/    /'  # warnings, if any
		else
			msg="FAIL $how seed $seed (exit $r):"$'\n'$(sed 's/^/    /' <<<"$out")
			echo "$msg"
			failed+="$msg"$'\n'
			fails=$((fails + 1))
		fi
	done
	t1=$(date +%s.%N)
	printf '== %s: %d of %d runs failed (%.1fs)\n' "$how" "$fails" "$RUNS" "$(echo "$t1 - $t0" | bc)"
	[ $fails -eq 0 ] || rc=1
done
if [ $rc -ne 0 ]; then
	echo "== the failed runs again:"
	printf '%s' "$failed" | head -n 12 # run.sh shows a log's last 15 lines
fi
[ $rc -eq 0 ] || die "fsync'ed appends lost or damaged after SIGKILL (see above)"
echo "fsync'ed appends survived SIGKILL in every run"
