#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# PostgreSQL under SplitFS gives the kernel's results and survives a crash,
# in every consistency mode (tests/apps/lib.sh: how runs are made and
# compared). Per configuration, as the user postgres, in $WORK/HOW/pg:
#   1. initdb (data checksums on); the server started with pg_ctl (fsync
#      on, a unix socket in that directory only)
#   2. tests/apps/pgwork.sql through psql: bulk inserts, TOAST values,
#      updates, deletes, VACUUM, VACUUM FULL, CHECKPOINT, COPY out to a
#      file and back in; its output must equal the kernel run's
#   3. pgbench -i, then one client with a fixed seed (deterministic: the
#      history and the balances must equal the kernel run's), then four
#      clients at once for a few seconds (the server's processes share its
#      buffers and WAL: only the invariants are compared)
#   4. tests/apps/pgcheck.sql (digests of the tables, pgbench's invariants);
#      pg_ctl stop -m immediate: the server is killed without a checkpoint
#   5. the server started again under SplitFS (it replays the WAL);
#      pgcheck.sql must print what it printed before the crash; a clean stop
#   6. without the library: pg_checksums (every block's checksum), the
#      server, pg_amcheck of every table and index, pgcheck.sql again.
# Steps 1-5 run under SplitFS in mode HOW, or natively (kernel). The
# server refuses root: every PostgreSQL program runs as the user postgres
# (Debian's postgresql package makes it). A server left running is
# stopped at exit. Tests (tests/run.sh apps-postgres TEST...): none (one
# workload).
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests
cur=postgres
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
RUNNING=() # data directories of servers that may be running
apps_cleanup() {
	local d
	for d in "${RUNNING[@]}"; do
		runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d" -m immediate -w stop >/dev/null 2>&1
	done
}
# pg HOW PROGRAM ARGS...: a PostgreSQL program as the user postgres, under
# SplitFS in mode HOW (natively for kernel and native).
pg() {
	local how=$1 prog=$PGBIN/$2
	shift 2
	if [ "$how" = native ]; then
		timeout -k 5 "${SFS_APPS_CMD_TIMEOUT:-120}" runuser -u postgres -- "$prog" "$@"
	else
		on "$how" runuser -u postgres -- "$prog" "$@"
	fi
}
# pg_up HOW DIR LOG: the server on DIR/data, its socket in DIR.
pg_up() {
	RUNNING+=("$2/data")
	pg "$1" pg_ctl -D "$2/data" -l "$3" -w -t 60 \
		-o "-k $2 -p 5499 -c listen_addresses= -c fsync=on -c max_wal_size=64MB" start >/dev/null ||
		{ echo "pg_ctl start ($1): $(tail -n 3 "$3" | tr '\n' ' ')" | cut -c 1-400 >"$T/step"; return 1; }
}
pg_sql() { # HOW DIR FILE OUT [psql args]
	local how=$1 dir=$2 file=$3 out=$4
	shift 4
	pg "$how" psql -X -q -At -h "$dir" -p 5499 -d postgres "$@" -f "$file" >"$out" 2>&1 ||
		{ echo "psql -f $(basename "$file") ($how): $(tail -n 2 "$out" | tr '\n' ' ')" | cut -c 1-400 >"$T/step"; return 1; }
}
# The single client's history and balances (the history's mtime left out).
BENCHSUM="SELECT count(*), sum(delta), md5(string_agg(tid || ':' || bid || ':' || aid || ':' || delta, ','
	ORDER BY aid, tid, bid, delta)) FROM pgbench_history;
	SELECT md5(string_agg(aid || ':' || abalance, ',' ORDER BY aid)) FROM pgbench_accounts;"

if [ -z "$PGBIN" ] || ! [ -x "$PGBIN/initdb" ]; then
	bad postgres "not installed (tests/deps.sh installs postgresql)"
elif ! id postgres >/dev/null 2>&1; then
	bad postgres "no user postgres (Debian's postgresql package makes it)"
elif ! runuser -u postgres -- test -r "$SFS_LIB"; then
	bad postgres "the user postgres cannot read $SFS_LIB (a directory above it is not searchable by others)"
else
	chmod 711 "$T" # the server's processes write the library's stats there
	for how in kernel $MODES; do
		clock
		D=$WORK/$how/pg
		mkdir -p "$D"
		chown postgres: "$D"
		chmod 700 "$D"
		install -o postgres -m 600 /dev/null "$T/stats.$cur.$how"
		install -o postgres -m 644 "$APPS/pgwork.sql" "$APPS/pgcheck.sql" "$D/"
		N=pg.$how
		{
			pg $how initdb -D "$D/data" -A trust -E UTF8 --locale=C --data-checksums >"$T/$N.initdb" &&
				pg_up $how "$D" "$D/server.log" &&
				pg_sql $how "$D" "$D/pgwork.sql" "$T/$N.work" -v copyfile="$D/item.copy" &&
				pg $how pgbench -h "$D" -p 5499 -i -q -s 2 postgres >"$T/$N.init" 2>&1 &&
				pg $how pgbench -h "$D" -p 5499 -n -c 1 -t 1500 --random-seed=7 postgres >"$T/$N.bench1" 2>&1 &&
				pg $how psql -X -At -h "$D" -p 5499 -d postgres -c "$BENCHSUM" >"$T/$N.benchsum" 2>&1 &&
				pg $how pgbench -h "$D" -p 5499 -n -c 4 -j 2 -T 4 postgres >"$T/$N.bench4" 2>&1 &&
				pg_sql $how "$D" "$D/pgcheck.sql" "$T/$N.before" &&
				pg $how pg_ctl -D "$D/data" -m immediate -w stop >/dev/null &&
				pg_up $how "$D" "$D/server2.log" &&
				pg_sql $how "$D" "$D/pgcheck.sql" "$T/$N.after" &&
				pg $how pg_ctl -D "$D/data" -m fast -w stop >/dev/null
		} 2>"$T/postgres.$how.err"
		r=$?
		apps_cleanup
		RUNNING=()
		status postgres $how $r
		spent $cur $how
		grep -qs 'number of failed transactions: 0 ' "$T/$N.bench4" && ok "postgres four clients ($how)" ||
			bad "postgres four clients ($how)" "$(grep -s -m 2 'failed\|error' "$T/$N.bench4" | tr '\n' ' ')"
		same_file "postgres tables after the crash and the WAL replay ($how)" "$T/$N.before" "$T/$N.after"
		# Read back without the library.
		o=$(pg native pg_checksums -c -D "$D/data" 2>&1)
		echo "$o" | grep -q '^Bad checksums: *0$' && ok "postgres pg_checksums ($how)" ||
			bad "postgres pg_checksums ($how)" "$(echo "$o" | tail -n 3 | tr '\n' ' ')"
		if pg_up native "$D" "$D/server3.log"; then
			o=$(pg native pg_amcheck -h "$D" -p 5499 --heapallindexed --install-missing postgres 2>&1) &&
				ok "postgres pg_amcheck ($how)" || bad "postgres pg_amcheck ($how)" "$(echo "$o" | head -n 3 | tr '\n' ' ')"
			pg_sql native "$D" "$D/pgcheck.sql" "$T/$N.native"
			pg native pg_ctl -D "$D/data" -m fast -w stop >/dev/null
		else
			bad "postgres server without the library ($how)" "$(cat "$T/step")"
		fi
		RUNNING=()
		same_file "postgres tables read without the library ($how)" "$T/$N.before" "$T/$N.native"
	done
	for m in $MODES; do
		same_file "postgres pgwork.sql output ($m)" "$T/pg.kernel.work" "$T/pg.$m.work"
		same_file "postgres pgbench one client, history and balances ($m)" "$T/pg.kernel.benchsum" "$T/pg.$m.benchsum"
		same_file "postgres tables after the crash ($m)" "$T/pg.kernel.after" "$T/pg.$m.after"
	done
	for m in $MODES; do served postgres $m; done
fi
apps_end
