#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sqlite3 under SplitFS gives the kernel's results, in every consistency
# mode (tests/apps/lib.sh: how runs are made and compared): the workload of
# tests/apps/sqlgen.py with a rollback journal (delete), with WAL (wal) and
# with a rollback journal and mmap (mmap), and two processes on one
# database (python3's sqlite3 module, tests/apps/sqlmp.py) with each
# journal (mp-delete, mp-wal). Per database: the output, the .dump read
# without the library and with it, the database file itself, and
# integrity_check without the library.
# Tests (tests/run.sh apps-sqlite3 TEST...): delete, wal, mmap, mp-delete,
# mp-wal.
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests delete wal mmap mp-delete mp-wal
cur=sqlite3

# integrity NAME HOW DB: sqlite3's integrity_check of DB (without the
# library) says ok.
integrity() {
	local ic
	ic=$(sqlite3 "$3" 'PRAGMA integrity_check;' 2>&1)
	if [ "$ic" = ok ]; then ok "sqlite-$1 ($2) integrity_check"; else bad "sqlite-$1 ($2) integrity_check" "$(echo "$ic" | head -n 3 | tr '\n' ';')"; fi
}

if have sqlite3; then
	# Rollback journal, WAL, rollback journal with mmap.
	for v in delete:DELETE:0 wal:WAL:0 mmap:DELETE:268435456; do
		IFS=: read -r name jm mm <<<"$v"
		wanted $name || continue
		$PY "$APPS/sqlgen.py" "$jm" "$mm" >"$T/$name.sql"
		for how in kernel $MODES; do
			clock
			db=$WORK/$how/sqlite-$name.db
			on $how sqlite3 "$db" <"$T/$name.sql" >"$T/sqlite-$name.$how.out" 2>"$T/sqlite-$name.$how.err"
			status sqlite-$name $how $?
			# Read back without the library, and with it.
			sqlite3 "$db" .dump >"$T/sqlite-$name.$how.dump" 2>&1
			on $how sqlite3 "$db" .dump >"$T/sqlite-$name.$how.sfsdump" 2>&1
			spent $cur $how
			integrity "$name" $how "$db"
		done
		for m in $MODES; do
			same_file "sqlite-$name output ($m)" "$T/sqlite-$name.kernel.out" "$T/sqlite-$name.$m.out"
			same_file "sqlite-$name .dump ($m)" "$T/sqlite-$name.kernel.dump" "$T/sqlite-$name.$m.dump"
			same_file "sqlite-$name .dump read under splitfs ($m)" "$T/sqlite-$name.$m.dump" "$T/sqlite-$name.$m.sfsdump"
			same_file "sqlite-$name database file ($m)" "$WORK/kernel/sqlite-$name.db" "$WORK/$m/sqlite-$name.db"
		done
	done
	# Two processes on one database (python3's sqlite3 module, tests/apps/sqlmp.py).
	for jm in DELETE WAL; do
		name=mp-${jm,,}
		wanted $name || continue
		for how in kernel $MODES; do
			clock
			db=$WORK/$how/sqlite-$name.db
			on $how $PY "$APPS/sqlmp.py" "$db" $jm >"$T/sqlite-$name.$how.out" 2>"$T/sqlite-$name.$how.err"
			status sqlite-$name $how $?
			spent $cur $how
			sqlite3 "$db" .dump >"$T/sqlite-$name.$how.dump" 2>&1
			integrity "$name" $how "$db"
		done
		for m in $MODES; do
			same_file "sqlite-$name output (two processes) ($m)" "$T/sqlite-$name.kernel.out" "$T/sqlite-$name.$m.out"
			same_file "sqlite-$name .dump ($m)" "$T/sqlite-$name.kernel.dump" "$T/sqlite-$name.$m.dump"
		done
	done
	for m in $MODES; do served sqlite3 $m; done
fi
apps_end
