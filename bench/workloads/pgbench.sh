#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# PostgreSQL's pgbench: a database server of many processes that share
# their buffers and one write-ahead log, each commit made durable with
# fdatasync (fsync on, synchronous_commit on). Transactions/s, higher is
# better, of TPC-B-like transactions (pgbench's default script: three
# updates, a select and an insert) with one client and with four, and of
# select-only transactions with four clients (reads of the shared buffers;
# the files are read only on a miss).
#
# The server and pgbench run under $RUN as the user postgres (the server
# refuses root): initdb, the server on a unix socket in $BENCH_DIR only,
# pgbench -i, the three runs, a clean stop. Each run starts from the same
# tables (scale: smoke 1, quick 4, full 10 branches of 100,000 accounts).
#
# Checks (any failure exits non-zero, with no result printed): every
# program exits 0, pgbench reports no failed transaction, and the server,
# started again without the library, finds pgbench's invariant in what
# was written under it: the sums of the accounts', tellers' and branches'
# balances each equal the sum of the history's deltas, and the history
# has as many rows as the TPC-B runs committed transactions.
# needs: psql pgbench runuser
set -eu -o pipefail
shopt -s inherit_errexit
case $BENCH_SCALE in
smoke) scale=1 secs=2 ;;
quick) scale=4 secs=5 ;;
*) scale=10 secs=10 ;;
esac
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] ||
	{ echo "pgbench: PostgreSQL is not installed (tests/deps.sh installs postgresql)" >&2; exit 1; }
id postgres >/dev/null 2>&1 || { echo "pgbench: no user postgres" >&2; exit 1; }
# The dynamic linker skips a preload it cannot open: the runs would be the
# kernel's, silently.
lib=$(dirname "$BENCH_BIN")/libsplitfs.so
runuser -u postgres -- test -r "$lib" ||
	{ echo "pgbench: the user postgres cannot read $lib" >&2; exit 1; }

D=$BENCH_DIR
chown postgres: "$D"
chmod 700 "$D"
runuser -u postgres -- test -x "$D" ||
	{ echo "pgbench: the user postgres cannot reach $D (a directory above it is not searchable by others)" >&2; exit 1; }
# The library's stats of the server's processes, which run as postgres.
if [ -n "${SPLITFS_STATS_FILE:-}" ]; then
	install -o postgres -m 644 /dev/null "$SPLITFS_STATS_FILE"
	chmod o+x "$(dirname "$SPLITFS_STATS_FILE")"
fi
PORT=5497
started=
cleanup() {
	[ -z "$started" ] || runuser -u postgres -- "$PGBIN/pg_ctl" -D "$D/data" -m immediate -w stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# pg PREFIX PROGRAM ARGS...: a PostgreSQL program as postgres, under PREFIX
# ($RUN, or nothing), bounded in time.
pg() {
	local prefix=$1 prog=$PGBIN/$2
	shift 2
	# shellcheck disable=SC2086 # the prefix is split into words on purpose
	timeout -k 5 600 $prefix runuser -u postgres -- "$prog" "$@"
}
# quiet WHAT PREFIX PROGRAM ARGS...: pg, its output kept for a failure.
quiet() {
	local what=$1 out
	shift
	out=$(pg "$@" 2>&1) || { echo "pgbench: $what failed: $(echo "$out" | tail -n 3 | tr '\n' ' ')" >&2; exit 1; }
}
up() { # PREFIX LOG
	started=1
	pg "$1" pg_ctl -D "$D/data" -l "$2" -w -t 120 \
		-o "-k $D -p $PORT -c listen_addresses= -c fsync=on -c synchronous_commit=on" start >/dev/null ||
		{ echo "pgbench: the server did not start; its log:" >&2; tail -n 5 "$2" >&2; exit 1; }
}
down() { quiet "pg_ctl stop" "$1" pg_ctl -D "$D/data" -m fast -w -t 120 stop; started=; }

# bench NAME CLIENTS ARGS...: one pgbench run; adds its result line to
# $results and, for a TPC-B run (no ARGS), its committed transactions to
# $committed.
results=
committed=0
bench() {
	local name=$1 c=$2 out tps n
	shift 2
	out=$(pg "$RUN" pgbench -h "$D" -p $PORT -n -c "$c" -j "$(((c + 1) / 2))" -T "$secs" "$@" postgres 2>&1) ||
		{ echo "pgbench: $name: $(echo "$out" | tail -n 3 | tr '\n' ' ')" >&2; exit 1; }
	echo "$out" | grep -q '^number of failed transactions: 0 ' ||
		{ echo "pgbench: $name: $(echo "$out" | grep -m1 failed)" >&2; exit 1; }
	tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
	n=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
	[ -n "$tps" ] && [ -n "$n" ] || { echo "pgbench: $name: no result: $out" >&2; exit 1; }
	[ $# -gt 0 ] || committed=$((committed + n))
	results+="{\"metric\":\"$name\",\"value\":$tps,\"unit\":\"txn/s\",\"better\":\"higher\"}"$'\n'
}

quiet initdb "$RUN" initdb -D "$D/data" -A trust -E UTF8 --locale=C
up "$RUN" "$D/server.log"
quiet "pgbench -i" "$RUN" pgbench -h "$D" -p $PORT -i -q -s $scale postgres
bench tpcb_c1 1
bench tpcb_c4 4
bench select_c4 4 -S
down "$RUN"

# What the runs committed, read without the library.
up "" "$D/server-native.log"
check=$(pg "" psql -X -v ON_ERROR_STOP=1 -At -h "$D" -p $PORT -d postgres -c "
	SELECT (SELECT coalesce(sum(delta), 0) FROM pgbench_history) || ' ' ||
	       (SELECT sum(abalance) FROM pgbench_accounts) || ' ' ||
	       (SELECT sum(tbalance) FROM pgbench_tellers) || ' ' ||
	       (SELECT sum(bbalance) FROM pgbench_branches) || ' ' ||
	       (SELECT count(*) FROM pgbench_history)")
down ""
read -r h a t b rows <<<"$check"
if [ "$a" != "$h" ] || [ "$t" != "$h" ] || [ "$b" != "$h" ]; then
	echo "pgbench: balances (accounts $a, tellers $t, branches $b) differ from the history's deltas ($h)" >&2
	exit 1
fi
[ "$rows" = "$committed" ] ||
	{ echo "pgbench: the history has $rows rows; the runs committed $committed transactions" >&2; exit 1; }
printf '%s' "$results"
