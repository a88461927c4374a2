#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CPython's own test suite (its regrtest and Debian's
# libpython3.X-testsuite, which tests/deps.sh installs), the modules that
# work on files, run on the image natively and under SplitFS in every
# consistency mode (tests/apps/lib.sh: how runs are made): files, buffered
# and raw I/O, mmap, os and posix calls, temporary files, archives and
# compressors, dbm and shelve, mailboxes (locks, renames), logging's file
# handlers, subprocess (descriptors across fork and exec), faulthandler
# (a crash ends the process). Tests nobody here wrote: a module that
# passes natively must pass in every mode, and the native run must pass
# all but a few (else the environment, not the library, is what failed).
# Found this way: a crash that exited 0 (faulthandler, util/guard.c) and
# the library's descriptors counted by a program (zipfile,
# interpose/fdlist.c).
# Tests (tests/run.sh apps-pystdlib TEST...): stdlib.
# Knobs: SFS_PYSTDLIB_MODULES (the modules, default below),
# SFS_APPS_CMD_TIMEOUT (seconds per run, default here 900).
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests stdlib
cur=python3-stdlib
SFS_APPS_CMD_TIMEOUT=${SFS_APPS_CMD_TIMEOUT:-900}
modules=${SFS_PYSTDLIB_MODULES:-test_os test_io test_fileio test_file test_bufio test_univnewlines
	test_mmap test_shutil test_tempfile test_posix test_largefile test_pathlib test_glob
	test_zipfile test_tarfile test_gzip test_bz2 test_lzma test_dbm test_dbm_dumb test_shelve
	test_mailbox test_fcntl test_logging test_py_compile test_filecmp test_fileinput
	test_zipimport test_genericpath test_posixpath test_faulthandler test_subprocess test_csv
	test_linecache test_unicode_file test_import test_tabnanny test_netrc test_mimetypes
	test_wave test_aifc test_sunau}

# failed OUT: the modules regrtest's summary in OUT lists as failed, one a
# line (crashes and time-outs are listed there too).
failed() {
	awk '/^[0-9]+ tests? failed:$/ { s = 1; next }
		s && /^    / { for (i = 1; i <= NF; i++) print $i; next }
		{ s = 0 }' "$1" | sort -u
}

if wanted stdlib; then
	if ! $PY -c 'import test.libregrtest, test.test_os' 2>/dev/null; then
		bad "python3 test suite" "not installed (tests/deps.sh installs libpython3.X-testsuite)"
	else
		n=$(wc -w <<<"$modules")
		for how in kernel $MODES; do
			clock
			# regrtest works in a directory of TMPDIR: on the image.
			mkdir -p "$WORK/$how/tmp"
			(cd "$WORK/$how/tmp" && TMPDIR=$WORK/$how/tmp on $how $PY -m test -j2 --timeout 600 \
				$modules >"$T/py.$how.out" 2>"$T/py.$how.err")
			spent $cur $how
			rm -f "$T/step" # regrtest's exit status is the failures', read below
			failed "$T/py.$how.out" >"$T/py.$how.failed"
			grep -q '^== Tests result' "$T/py.$how.out" ||
				bad "python3 stdlib tests ($how)" "no result from regrtest: $(tail -n 3 "$T/py.$how.out" "$T/py.$how.err" | tr '\n' ' ')"
		done
		nk=$(wc -l <"$T/py.kernel.failed")
		if [ "$nk" -le 2 ]; then
			ok "python3 stdlib tests (kernel): $((n - nk)) of $n modules pass$([ "$nk" = 0 ] || echo "; failing natively: $(tr '\n' ' ' <"$T/py.kernel.failed")")"
		else
			bad "python3 stdlib tests (kernel)" "$nk of $n modules fail natively: $(tr '\n' ' ' <"$T/py.kernel.failed")"
		fi
		for m in $MODES; do
			new=$(comm -13 "$T/py.kernel.failed" "$T/py.$m.failed" | tr '\n' ' ')
			if [ -z "$new" ] && grep -q '^== Tests result' "$T/py.$m.out"; then
				ok "python3 stdlib tests ($m): every module that passes natively passes"
			elif [ -n "$new" ]; then
				bad "python3 stdlib tests ($m)" "fail under SplitFS only: $new"
				grep -E -A8 '^(FAIL|ERROR):|^test [a-z_0-9]+ (failed|crashed)' "$T/py.$m.out" | head -n 40 | sed 's/^/    /'
			fi
		done
	fi
fi
apps_end
