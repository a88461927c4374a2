#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cp (coreutils) under SplitFS gives the kernel's results, in every
# consistency mode (tests/apps/lib.sh: how runs are made and compared):
# a reflink copy (cp -a) and a plain copy (--reflink=never) of the input
# tree (tests/apps/mktree.py), timestamps preserved; the kernel's copies
# equal the input, each mode's the kernel's.
# One test: no test names.
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests
cur=cp
mk_input
for how in kernel $MODES; do
	clock
	D=$WORK/$how/cp
	mkdir -p "$D"
	{
		on $how cp -a "$IN/src" "$D/reflink" &&
			on $how cp -R --preserve=all --reflink=never "$IN/src" "$D/copy"
	} 2>"$T/cp.$how.err"
	status cp $how $?
	spent $cur $how
done
same_tree "cp -a (kernel vs input)" "$WORK/kernel/cp/reflink" "$IN/src" mtime
same_tree "cp --reflink=never (kernel vs input)" "$WORK/kernel/cp/copy" "$IN/src" mtime
for m in $MODES; do
	same_tree "cp -a ($m)" "$WORK/kernel/cp/reflink" "$WORK/$m/cp/reflink" mtime
	same_tree "cp --reflink=never ($m)" "$WORK/kernel/cp/copy" "$WORK/$m/cp/copy" mtime
done
apps_end
