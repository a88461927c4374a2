#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make demo: a real workload (sqlite3 building and querying a database) on
# SplitFS's default file system (an XFS image in /dev/shm), run on the plain
# kernel path and under SplitFS, alternating, several times; prints both
# median times, their ratio, and checks that both produced the same answers
# and the same database.   Knobs: DEMO_ROWS (100000), DEMO_RUNS (3).
set -eu
cd "$(dirname "$0")/.."
ROWS=${DEMO_ROWS:-100000}
RUNS=${DEMO_RUNS:-3}
MNT=/tmp/splitfs-demo
CLI=$PWD/build/splitfs
WORK=$(mktemp -d)
trap '"$CLI" image down "$MNT" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

"$CLI" image down "$MNT" >/dev/null 2>&1 || true
"$CLI" image up "$MNT" --size 2G
python3 demo/sqlite_workload.py "$ROWS" >"$WORK/workload.sql"
echo "workload: sqlite3, $ROWS rows inserted in transactions of 500 (WAL), index, 200 scans"

# One run: a fresh database, the script, the elapsed seconds on stdout.
run() { # how out
	rm -f "$MNT"/demo.db*
	local t0 t1
	t0=$(date +%s.%N)
	if [ "$1" = splitfs ]; then
		"$CLI" run --root "$MNT" -- sqlite3 "$MNT/demo.db" <"$WORK/workload.sql" >"$2"
	else
		sqlite3 "$MNT/demo.db" <"$WORK/workload.sql" >"$2"
	fi
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

: >"$WORK/kernel.times"
: >"$WORK/splitfs.times"
for i in $(seq "$RUNS"); do
	k=$(run kernel "$WORK/kernel.out")
	sqlite3 "$MNT/demo.db" .dump >"$WORK/kernel.dump"
	s=$(run splitfs "$WORK/splitfs.out")
	sqlite3 "$MNT/demo.db" .dump >"$WORK/splitfs.dump"
	printf '  run %d: kernel %6.2f s   splitfs %6.2f s\n' "$i" "$k" "$s"
	echo "$k" >>"$WORK/kernel.times"
	echo "$s" >>"$WORK/splitfs.times"
	cmp -s "$WORK/kernel.out" "$WORK/splitfs.out" || { echo "demo: answers differ"; exit 1; }
	cmp -s "$WORK/kernel.dump" "$WORK/splitfs.dump" || { echo "demo: databases differ"; exit 1; }
done
km=$(median <"$WORK/kernel.times")
sm=$(median <"$WORK/splitfs.times")
echo "answers and database dumps identical in every run"
printf 'median of %d runs: kernel %.2f s, splitfs %.2f s, ratio splitfs/kernel %.2f (%.2fx speed)\n' \
	"$RUNS" "$km" "$sm" "$(echo "$sm / $km" | bc -l)" "$(echo "$km / $sm" | bc -l)"
