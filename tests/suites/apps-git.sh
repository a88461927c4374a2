#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# git under SplitFS gives the kernel's results, in every consistency mode
# (tests/apps/lib.sh: how runs are made and compared): a repository made
# from the input tree (tests/apps/mktree.py), commits with two rounds of
# modifications, a move and an untrack (fixed dates: the hashes are the
# kernel run's), log, status, fsck, gc, archive, clone and checkout. The
# outputs, the hashes, the object set and the work trees equal the kernel
# run's, read with the library and again without it (fsck --full too).
# One test: no test names.
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests
cur=git
if have git; then
	mk_input
	mkdir -p "$T/home"
	export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=SplitFS GIT_AUTHOR_EMAIL=splitfs@example.com \
		GIT_COMMITTER_NAME=SplitFS GIT_COMMITTER_EMAIL=splitfs@example.com
	gitrun() { # HOW DATE GIT-ARGS...
		local how=$1 date=$2
		shift 2
		GIT_AUTHOR_DATE="@$date +0000" GIT_COMMITTER_DATE="@$date +0000" on $how git -C "$R" "$@"
	}
	for how in kernel $MODES; do
		clock
		D=$WORK/$how/git
		R=$D/repo
		mkdir -p "$D"
		{
			on $how cp -a "$IN/src" "$R" &&
				gitrun $how 0 init -q -b main &&
				gitrun $how 1700000000 add -A &&
				gitrun $how 1700000000 commit -q -m initial &&
				on $how $PY "$APPS/mktree.py" modify "$R" 1 &&
				gitrun $how 1700001000 add -A &&
				gitrun $how 1700001000 commit -q -m "round 1" &&
				on $how $PY "$APPS/mktree.py" modify "$R" 2 &&
				gitrun $how 1700002000 commit -q -a -m "round 2 (tracked only)" &&
				gitrun $how 1700003000 add -A &&
				gitrun $how 1700003000 commit -q -m "round 2 (new files)" &&
				gitrun $how 1700004000 mv d00 moved-d00 &&
				gitrun $how 1700004000 rm -q -r --cached d10 &&
				gitrun $how 1700004000 commit -q -m "move and untrack" &&
				gitrun $how 0 log --stat >"$T/git-log.$how.out" &&
				gitrun $how 0 rev-parse HEAD 'HEAD^{tree}' HEAD~1 HEAD~2 HEAD~3 HEAD~4 >"$T/git-rev.$how.out" &&
				gitrun $how 0 status --porcelain >"$T/git-status.$how.out" &&
				gitrun $how 0 fsck --full --no-progress >"$T/git-fsck.$how.out" 2>&1 &&
				gitrun $how 0 gc -q &&
				gitrun $how 0 fsck --full --no-progress >>"$T/git-fsck.$how.out" 2>&1 &&
				gitrun $how 0 archive --format=tar HEAD >"$T/git-archive.$how.tar" &&
				on $how git clone -q --no-local "$R" "$D/clone" &&
				GIT_AUTHOR_DATE="@1700005000 +0000" GIT_COMMITTER_DATE="@1700005000 +0000" \
					on $how git -C "$D/clone" checkout -q -b old HEAD~3
		} 2>"$T/git.$how.err"
		status git $how $?
		spent $cur $how
		# Read back without the library.
		git -C "$R" log --stat >"$T/git-log-native.$how.out" 2>&1
		git -C "$R" rev-parse HEAD 'HEAD^{tree}' >"$T/git-rev-native.$how.out" 2>&1
		git -C "$R" fsck --full --no-progress >"$T/git-fsck-native.$how.out" 2>&1 ||
			bad "git fsck --full ($how, native)" "$(head -n 3 "$T/git-fsck-native.$how.out" | tr '\n' ';')"
		git -C "$R" status --porcelain >"$T/git-status-native.$how.out" 2>&1
		git -C "$R" cat-file --batch-all-objects --batch-check >"$T/git-objects.$how.out" 2>&1
	done
	for m in $MODES; do
		same_file "git log --stat ($m)" "$T/git-log.kernel.out" "$T/git-log.$m.out"
		same_file "git commit and tree hashes ($m)" "$T/git-rev.kernel.out" "$T/git-rev.$m.out"
		same_file "git status ($m)" "$T/git-status.kernel.out" "$T/git-status.$m.out"
		same_file "git fsck output ($m)" "$T/git-fsck.kernel.out" "$T/git-fsck.$m.out"
		same_file "git archive ($m)" "$T/git-archive.kernel.tar" "$T/git-archive.$m.tar"
		same_file "git log --stat (native read) ($m)" "$T/git-log-native.kernel.out" "$T/git-log-native.$m.out"
		same_file "git hashes (native read) ($m)" "$T/git-rev-native.kernel.out" "$T/git-rev-native.$m.out"
		same_file "git status (native read) ($m)" "$T/git-status-native.kernel.out" "$T/git-status-native.$m.out"
		same_file "git object set (native read) ($m)" "$T/git-objects.kernel.out" "$T/git-objects.$m.out"
		same_tree "git work tree ($m)" "$WORK/kernel/git/repo" "$WORK/$m/git/repo"
		same_tree "git clone work tree ($m)" "$WORK/kernel/git/clone" "$WORK/$m/git/clone"
		served git $m
	done
fi
apps_end
