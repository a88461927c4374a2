#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tar (+gzip) under SplitFS gives the kernel's results, in every
# consistency mode (tests/apps/lib.sh: how runs are made and compared):
# create (plain and gzip) from the input tree (tests/apps/mktree.py),
# list, extract both, compare (tar -d). The archives and the listing are
# byte-identical with the kernel run's, the extracted trees equal
# (timestamps included), and the kernel's extracted tree equals the input.
# One test: no test names.
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests
cur=tar
if have tar gzip; then
	mk_input
	TAROPT=(--sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu)
	for how in kernel $MODES; do
		clock
		D=$WORK/$how/tar
		mkdir -p "$D/x" "$D/xz"
		{
			on $how tar -cf "$D/tree.tar" "${TAROPT[@]}" -C "$IN/src" . &&
				on $how tar -I 'gzip -n' -cf "$D/tree.tgz" "${TAROPT[@]}" -C "$IN/src" . &&
				on $how tar -tvf "$D/tree.tar" >"$T/tar-list.$how.out" &&
				on $how tar -xf "$D/tree.tar" -C "$D/x" &&
				on $how tar -xzf "$D/tree.tgz" -C "$D/xz" &&
				on $how tar -df "$D/tree.tar" -C "$D/x" >&2 # differences to tar.$how.err
		} 2>"$T/tar.$how.err"
		status tar $how $?
		spent $cur $how
	done
	same_tree "tar extracted (kernel vs input)" "$WORK/kernel/tar/x" "$IN/src"
	for m in $MODES; do
		same_file "tar archive ($m)" "$WORK/kernel/tar/tree.tar" "$WORK/$m/tar/tree.tar"
		same_file "tar.gz archive ($m)" "$WORK/kernel/tar/tree.tgz" "$WORK/$m/tar/tree.tgz"
		same_file "tar -tv listing ($m)" "$T/tar-list.kernel.out" "$T/tar-list.$m.out"
		same_tree "tar extracted ($m)" "$WORK/kernel/tar/x" "$WORK/$m/tar/x" mtime
		same_tree "tar.gz extracted ($m)" "$WORK/kernel/tar/xz" "$WORK/$m/tar/xz" mtime
		served tar $m
	done
fi
apps_end
