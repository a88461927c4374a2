#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# rsync under SplitFS gives the kernel's results, in every consistency mode
# (tests/apps/lib.sh: how runs are made and compared): a full copy of the
# input tree (tests/apps/mktree.py), a delta transfer to its first round
# of modifications, an in-place delta transfer to its second; then rsync
# -c must find nothing to do. The kernel's results equal the inputs, each
# mode's the kernel's, and so do rsync's itemized changes.
# One test: no test names.
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests
cur=rsync
if have rsync; then
	mk_input 2
	for how in kernel $MODES; do
		clock
		D=$WORK/$how/rsync
		mkdir -p "$D"
		{
			on $how rsync -a "$IN/src/" "$D/r/" &&
				on $how rsync -a -i --no-whole-file --delete "$IN/src2/" "$D/r/" >"$T/rsync-1.$how.out" &&
				cp -a "$D/r" "$D/r2" && # the state after the delta transfer (native copy)
				on $how rsync -a -i --no-whole-file --inplace --delete "$IN/src3/" "$D/r/" >"$T/rsync-2.$how.out" &&
				on $how rsync -a -i -c "$IN/src3/" "$D/r/" >"$T/rsync-3.$how.out"
		} 2>"$T/rsync.$how.err"
		status rsync $how $?
		spent $cur $how
	done
	same_tree "rsync delta result (kernel vs input)" "$WORK/kernel/rsync/r2" "$IN/src2" mtime
	same_tree "rsync in-place result (kernel vs input)" "$WORK/kernel/rsync/r" "$IN/src3" mtime
	# rsync's generator (*deleting) and receiver (>f) print concurrently:
	# compare the itemized changes in sorted order.
	for f in "$T"/rsync-[12].*.out; do sort "$f" >"$f.sorted"; done
	for m in $MODES; do
		same_tree "rsync delta result ($m)" "$WORK/kernel/rsync/r2" "$WORK/$m/rsync/r2" mtime
		same_tree "rsync in-place result ($m)" "$WORK/kernel/rsync/r" "$WORK/$m/rsync/r" mtime
		same_file "rsync -i output (delta) ($m)" "$T/rsync-1.kernel.out.sorted" "$T/rsync-1.$m.out.sorted"
		same_file "rsync -i output (in place) ($m)" "$T/rsync-2.kernel.out.sorted" "$T/rsync-2.$m.out.sorted"
	done
	for how in kernel $MODES; do
		if [ -s "$T/rsync-3.$how.out" ]; then
			bad "rsync -c finds nothing to do ($how)" "$(head -n 3 "$T/rsync-3.$how.out" | tr '\n' ';')"
		else
			ok "rsync -c finds nothing to do ($how)"
		fi
	done
	for m in $MODES; do served rsync $m; done
fi
apps_end
