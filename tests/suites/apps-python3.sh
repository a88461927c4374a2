#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# python3 under SplitFS gives the kernel's results, in every consistency
# mode (tests/apps/lib.sh: how runs are made and compared): the tree
# generator tests/apps/mktree.py (the tree must also equal the input made
# natively, timestamps included) and tests/apps/pyio.py, each of its
# sections (io, mmap, utime, rewrite, share) compared on its own: its
# output lines and its files.
# Tests (tests/run.sh apps-python3 TEST...): mktree, pyio.
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests mktree pyio
cur=python3
if have python3; then
	wanted mktree && mk_input
	for how in kernel $MODES; do
		clock
		D=$WORK/$how/py
		if wanted mktree; then
			on $how $PY "$APPS/mktree.py" create "$D/tree" 2>"$T/mktree.$how.err"
			status mktree $how $?
		fi
		if wanted pyio; then
			on $how $PY "$APPS/pyio.py" "$D/io" >"$T/pyio.$how.out" 2>"$T/pyio.$how.err"
			status pyio $how $?
		fi
		spent $cur $how
	done
	if wanted mktree; then
		same_tree "python3 mktree tree (kernel vs input)" "$WORK/kernel/py/tree" "$IN/src" mtime
		for m in $MODES; do
			same_tree "python3 mktree tree ($m)" "$WORK/kernel/py/tree" "$WORK/$m/py/tree" mtime
		done
	fi
	if wanted pyio; then
		# Each section of pyio.py on its own: its output lines and its files.
		for sec in io mmap utime rewrite share; do
			for how in kernel $MODES; do
				grep "^$sec " "$T/pyio.$how.out" >"$T/pyio-$sec.$how.out"
			done
			[ -s "$T/pyio-$sec.kernel.out" ] || bad "python3 pyio $sec" "no output from the kernel run"
			t=""
			[ $sec = utime ] && t=mtime
			for m in $MODES; do
				same_file "python3 pyio $sec output ($m)" "$T/pyio-$sec.kernel.out" "$T/pyio-$sec.$m.out"
				same_tree "python3 pyio $sec files ($m)" "$WORK/kernel/py/io/$sec" "$WORK/$m/py/io/$sec" $t
			done
		done
	fi
	for m in $MODES; do served python3 $m; done
fi
apps_end
