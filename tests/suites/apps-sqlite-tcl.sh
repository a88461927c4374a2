#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SQLite's own test suite (its Tcl tests, which nobody here wrote) under
# SplitFS gives the kernel's results, in every consistency mode: the
# source Debian 12 ships for its sqlite3 (3.40.1), its harness `testfixture`
# built by tests/apps/sqlite-testfixture.sh into $SFS_BUILD/sqlite-tcl, and
# its parallel runner (test/testrunner.tcl, two helpers) over the veryquick
# permutation: about 1,100 scripts and 255,000 tests of journals, WAL and
# its shared-memory file, mmap I/O, locks between connections, backups,
# vacuum, temporary files (its crash, malloc and I/O error simulations are
# in the longer permutations: SQLITE_TCL_TESTS="full crash%"). Each run
# starts in a folder of its own on the image, natively and then under the
# library in each mode; a mode must fail exactly the scripts the native
# run fails, each with the same number of errors, and leave unfinished
# exactly the scripts it leaves unfinished. Run as root, the native run
# fails a few scripts that expect a read-only file to stay unwritable
# (8 here, 26 errors of 254,898 tests; attach.test does not finish): more
# than 12 failing natively means the environment, not the library, failed.
#
# Opt-in (a long run: here 3 minutes natively and in POSIX mode, 13 in sync
# mode, 15 in strict mode, where every write is durable when it returns):
#   SFS_SQLITE_TCL=1 tests/run.sh apps-sqlite-tcl
# Without it the suite skips. Knobs: SQLITE_TCL_TESTS (testrunner.tcl's
# arguments: a permutation and patterns, default "veryquick"; e.g. "full
# wal% pager% mmap%"), SFS_APPS_CMD_TIMEOUT (seconds a run may take,
# default 2400). tests/run.sh gives this suite 7200 s unless
# SFS_TEST_TIMEOUT says otherwise.
if [ "${SFS_SQLITE_TCL:-0}" != 1 ]; then
	echo "skipped: opt-in, a long run (SFS_SQLITE_TCL=1 tests/run.sh apps-sqlite-tcl)"
	exit 77
fi
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests veryquick
cur=sqlite-tcl
SFS_APPS_CMD_TIMEOUT=${SFS_APPS_CMD_TIMEOUT:-2400}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$SFS_BUILD/sqlite-tcl
args=${SQLITE_TCL_TESTS:-veryquick}

# The scripts a run failed, each with its error count, and those it left
# unfinished, one a line, sorted: what two runs must share.
outcome() {
	{
		sed -n 's/^\([^ ]*\.test\)\.\.\. FAILED - \([0-9]*\) errors of.*/failed \1 \2/p' "$1"
		sed -n 's/^Tests DID NOT FINISH (crashed?): //p' "$1" | tr ' ' '\n' | sed '/^$/d; s/^/unfinished /'
	} | sort
}

if wanted veryquick; then
	"$REPO/tests/apps/sqlite-testfixture.sh" "$FIX" || die "could not build SQLite's testfixture"
	for how in kernel $MODES; do
		mkdir -p "$WORK/$how"
		clock
		# testrunner.tcl exits 1 when a test failed: the outcome below decides.
		(cd "$WORK/$how" && on $how "$FIX/testfixture" "$FIX/src/test/testrunner.tcl" --jobs 2 \
			$args >"$T/sq.$how.out" 2>&1)
		spent $cur $how
		rm -f "$T/step"
		outcome "$T/sq.$how.out" >"$T/sq.$how.outcome"
		total=$(sed -n 's/^\([0-9]*\) errors from \([0-9]*\) tests\.$/\1 errors of \2 tests/p' "$T/sq.$how.out")
		[ -n "$total" ] || bad "sqlite tests ($how)" "no result from testrunner: $(tail -n 3 "$T/sq.$how.out" | tr '\n' ' ')"
		echo "  $how: $total, $(grep -c '^failed' "$T/sq.$how.outcome") scripts failed"
	done
	nk=$(grep -c '^failed' "$T/sq.kernel.outcome")
	if [ "$nk" -le 12 ]; then
		ok "sqlite tests (kernel): $nk scripts fail natively$([ "$nk" = 0 ] || echo ": $(awk '/^failed/ {print $2}' "$T/sq.kernel.outcome" | tr '\n' ' ')")"
	else
		bad "sqlite tests (kernel)" "$nk scripts fail natively: the environment is not one these tests pass in"
	fi
	for m in $MODES; do
		if [ -s "$T/sq.$m.out" ] && diff "$T/sq.kernel.outcome" "$T/sq.$m.outcome" >"$T/sq.$m.diff"; then
			ok "sqlite tests ($m): the same scripts fail, with the same errors, as natively"
		else
			bad "sqlite tests ($m)" "not the native outcome (< native, > $m): $(tr '\n' ' ' <"$T/sq.$m.diff")"
			grep -E '^! ' "$WORK/$m/testrunner.log" 2>/dev/null | head -n 20 | sed 's/^/    /'
		fi
	done
fi
apps_end
