#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real applications give byte-identical results with and without SplitFS.
# Each workload runs twice on the XFS image, in $WORK/kernel (no library) and
# in $WORK/splitfs (under SplitFS, as sfs_run); the results are then read WITHOUT the
# library (cmp, diff -r, sha256 manifests, the applications' own checkers)
# and compared with each other and, where there is one, with the expected
# input. Applications: python3 (tests/apps/pyio.py, mktree.py), sqlite3
# (rollback journal, WAL, mmap; two processes on one database), tar (+gzip),
# cp, git, rsync (delta and in-place).
# Prints "ok NAME" or "FAIL NAME: DETAIL" per check; exits 1 if any failed.
# The inputs are deterministic (tests/apps/*.py with fixed seeds, fixed
# timestamps); tests/deps.sh installs the applications.
. "$(dirname "$0")/../lib.sh"
APPS=$(cd "$(dirname "$0")/../apps" && pwd)
export LC_ALL=C TZ=UTC
T=$(mktemp -d /tmp/sfs-apps.XXXXXX) # captured outputs and manifests, off the image
trap 'rm -rf "$T"' EXIT
trap 'exit 143' TERM INT
rc=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; rc=1; }

PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
declare -A missing=()
for app in sqlite3 tar gzip git rsync python3 diff cmp sha256sum; do
	command -v $app >/dev/null 2>&1 || missing[$app]=1
done
[ -n "$PY" ] && [ -x "$PY" ] || missing[python3]=1
[ -z "${missing[python3]:-}" ] || die "python3 not found (tests/deps.sh installs it); it builds every input"
for app in diff cmp sha256sum; do
	[ -z "${missing[$app]:-}" ] || die "$app not found (tests/deps.sh installs diffutils/coreutils)"
done
# have APP...: true if installed, else a FAIL line (never a silent skip).
have() {
	local a
	for a; do
		if [ -n "${missing[$a]:-}" ]; then
			bad "$a" "not installed (tests/deps.sh installs it)"
			return 1
		fi
	done
}

# on HOW CMD...: CMD natively (kernel) or under SplitFS (splitfs), with the
# library's counters on (SPLITFS_STATS=1) for served below. The library is
# meant to write its table to SPLITFS_STATS_FILE; a table that arrives on
# CMD's stderr instead is moved there too, the rest of stderr goes on to the
# caller's stderr. A failing CMD is remembered for status.
# Each command gets SFS_APPS_CMD_TIMEOUT seconds (default 120): a hang is
# a failure of that workload, not of the whole run.
# SFS_APPS_NATIVE=1 runs the splitfs side natively too: a check that the
# workloads themselves are deterministic.
on() {
	local how=$1 r
	shift
	local limit=(timeout -k 5 "${SFS_APPS_CMD_TIMEOUT:-120}")
	if [ "$how" != splitfs ] || [ "${SFS_APPS_NATIVE:-0}" = 1 ]; then
		"${limit[@]}" "$@"
		r=$?
	else
		SPLITFS_STATS=1 SPLITFS_STATS_FILE=$T/stats.$cur "${limit[@]}" "$SFS_CLI" run --root "$SFS_MNT" -- "$@" 2>"$T/raw.err"
		r=$?
		awk -v f="$T/stats.$cur" '/^splitfs stats: pid/ { s = 1 }
			s { print >> f; if (/^rusage /) s = 0; next }
			{ print > "/dev/stderr" }' "$T/raw.err"
	fi
	[ $r = 0 ] || echo "$(basename "$1") ${*:2} (exit $r$([ $r = 124 ] && echo ", timed out"))" | cut -c 1-240 >"$T/step"
	return $r
}

# manifest DIR [mtime]: path, type, mode, size, link target (and mtime) of
# every entry but .git, then the sha256 of every regular file; read without
# the library.
manifest() {
	local t=""
	[ "${2:-}" = mtime ] && t=" %T@"
	(
		cd "$1" || exit 1
		find . -mindepth 1 -name .git -prune -o \( -type d -printf "%p d %m$t\n" \) \
			-o \( -type l -printf "%p l -> %l$t\n" \) -o \( -type f -printf "%p f %m %s$t\n" \) \
			-o -printf "%p ?\n" | sort
		find . -name .git -prune -o -type f -print0 | sort -z | xargs -0 -r sha256sum | awk '{ print $2, "sha256", $1 }'
	)
}

# same_file NAME A B: byte-identical files.
same_file() {
	if [ ! -e "$2" ] || [ ! -e "$3" ]; then
		bad "$1" "missing: $(ls -d "$2" "$3" 2>&1 | grep -i 'no such' | tr '\n' ' ')"
	elif cmp -s "$2" "$3"; then
		ok "$1"
	else
		bad "$1" "$2 and $3 differ: $(cmp "$2" "$3" 2>&1 | head -n 1 | sed 's/.* differ: //'); sizes $(stat -c %s "$2") and $(stat -c %s "$3")"
		diff -u "$2" "$3" 2>/dev/null | head -n 20 | sed 's/^/    /'
	fi
}

# same_tree NAME A B [mtime]: diff -r and equal manifests (.git left out).
same_tree() {
	local name=$1 a=$2 b=$3 m=${4:-}
	local d
	if ! d=$(diff -r --no-dereference -x .git "$a" "$b" 2>&1); then
		bad "$name" "diff -r $a $b: $(echo "$d" | head -n 3 | tr '\n' ';')"
		echo "$d" | head -n 20 | sed 's/^/    /'
		return
	fi
	manifest "$a" $m >"$T/ma" && manifest "$b" $m >"$T/mb"
	if ! d=$(diff "$T/ma" "$T/mb"); then
		bad "$name" "manifests of $a and $b differ in $(echo "$d" | grep '^[<>]' | awk '{ print $2 }' | sort -u | wc -l) paths ($m)"
		echo "$d" | grep '^[<>]' | sort -s -k2,2 | head -n 20 | sed 's/^/    /'
		return
	fi
	ok "$name"
}

# served APP: the library really served calls for APP (its counters show
# read/write family calls not passed to the kernel). Also shows the
# library's own messages, if any.
served() {
	[ "${SFS_APPS_NATIVE:-0}" = 1 ] && return
	local f=$T/stats.$1
	local n tables
	n=$(awk '$1 ~ /^(read|write|pread|pwrite|readv|writev|mmap|xfer)$/ && $2 > $6 { s += $2 - $6 } END { print s + 0 }' "$f" 2>/dev/null)
	tables=$(grep -c '^splitfs stats: pid' "$f" 2>/dev/null)
	if [ "${n:-0}" -gt 0 ]; then
		ok "$1 served by splitfs ($n calls in ${tables} stats tables)"
	else
		bad "$1 served by splitfs" "no read/write call served by the library in ${tables:-0} stats tables (a program that closes stderr at exit loses the table unless SPLITFS_STATS_FILE is honoured)"
	fi
	grep '^splitfs:' "$f" 2>/dev/null | sort | uniq -c | sort -rn | head -n 5 | sed "s/^/    note ($1): /"
}

# status NAME HOW RC: the workload itself succeeded (else: which command
# failed, and the end of its stderr).
status() {
	if [ "$3" = 0 ]; then
		ok "$1 ($2) exit 0"
	else
		bad "$1 ($2)" "$(cat "$T/step" 2>/dev/null || echo "exit $3"); stderr: $(tail -n 3 "$T/$1.$2.err" 2>/dev/null | tr '\n' ' ')"
	fi
	rm -f "$T/step"
}

mkdir -p "$WORK/kernel" "$WORK/splitfs"

# --- inputs (natively): the tree and two rounds of modifications ------------
IN=$WORK/input
$PY "$APPS/mktree.py" create "$IN/src" || die "mktree.py create"
cp -a "$IN/src" "$IN/src2" && $PY "$APPS/mktree.py" modify "$IN/src2" 1 || die "mktree.py modify 1"
cp -a "$IN/src2" "$IN/src3" && $PY "$APPS/mktree.py" modify "$IN/src3" 2 || die "mktree.py modify 2"

# --- python3: the tree generator and pyio.py --------------------------------
cur=python3
if have python3; then
	for how in kernel splitfs; do
		D=$WORK/$how/py
		on $how $PY "$APPS/mktree.py" create "$D/tree" 2>"$T/mktree.$how.err"
		status mktree $how $?
		on $how $PY "$APPS/pyio.py" "$D/io" >"$T/pyio.$how.out" 2>"$T/pyio.$how.err"
		status pyio $how $?
	done
	same_tree "python3 mktree tree (kernel vs input)" "$WORK/kernel/py/tree" "$IN/src" mtime
	same_tree "python3 mktree tree" "$WORK/kernel/py/tree" "$WORK/splitfs/py/tree" mtime
	# Each section of pyio.py on its own: its output lines and its files.
	for sec in io mmap utime rewrite share; do
		grep "^$sec " "$T/pyio.kernel.out" >"$T/pyio-$sec.kernel.out"
		grep "^$sec " "$T/pyio.splitfs.out" >"$T/pyio-$sec.splitfs.out"
		[ -s "$T/pyio-$sec.kernel.out" ] || bad "python3 pyio $sec" "no output from the kernel run"
		same_file "python3 pyio $sec output" "$T/pyio-$sec.kernel.out" "$T/pyio-$sec.splitfs.out"
		m=""
		[ $sec = utime ] && m=mtime
		same_tree "python3 pyio $sec files" "$WORK/kernel/py/io/$sec" "$WORK/splitfs/py/io/$sec" $m
	done
	served python3
fi

# --- sqlite3: rollback journal, WAL, rollback journal with mmap ------------
cur=sqlite3
if have sqlite3; then
	for v in delete:DELETE:0 wal:WAL:0 mmap:DELETE:268435456; do
		IFS=: read -r name jm mm <<<"$v"
		$PY "$APPS/sqlgen.py" "$jm" "$mm" >"$T/$name.sql"
		for how in kernel splitfs; do
			db=$WORK/$how/sqlite-$name.db
			on $how sqlite3 "$db" <"$T/$name.sql" >"$T/sqlite-$name.$how.out" 2>"$T/sqlite-$name.$how.err"
			status sqlite-$name $how $?
			# Read back without the library, and with it.
			sqlite3 "$db" .dump >"$T/sqlite-$name.$how.dump" 2>&1
			on $how sqlite3 "$db" .dump >"$T/sqlite-$name.$how.sfsdump" 2>&1
			ic=$(sqlite3 "$db" 'PRAGMA integrity_check;' 2>&1)
			if [ "$ic" = ok ]; then ok "sqlite-$name ($how) integrity_check"; else bad "sqlite-$name ($how) integrity_check" "$(echo "$ic" | head -n 3 | tr '\n' ';')"; fi
		done
		same_file "sqlite-$name output" "$T/sqlite-$name.kernel.out" "$T/sqlite-$name.splitfs.out"
		same_file "sqlite-$name .dump" "$T/sqlite-$name.kernel.dump" "$T/sqlite-$name.splitfs.dump"
		same_file "sqlite-$name .dump read under splitfs" "$T/sqlite-$name.splitfs.dump" "$T/sqlite-$name.splitfs.sfsdump"
		same_file "sqlite-$name database file" "$WORK/kernel/sqlite-$name.db" "$WORK/splitfs/sqlite-$name.db"
	done
	# Two processes on one database (python3's sqlite3 module, tests/apps/sqlmp.py).
	for jm in DELETE WAL; do
		name=mp-${jm,,}
		for how in kernel splitfs; do
			db=$WORK/$how/sqlite-$name.db
			on $how $PY "$APPS/sqlmp.py" "$db" $jm >"$T/sqlite-$name.$how.out" 2>"$T/sqlite-$name.$how.err"
			status sqlite-$name $how $?
			sqlite3 "$db" .dump >"$T/sqlite-$name.$how.dump" 2>&1
			ic=$(sqlite3 "$db" 'PRAGMA integrity_check;' 2>&1)
			if [ "$ic" = ok ]; then ok "sqlite-$name ($how) integrity_check"; else bad "sqlite-$name ($how) integrity_check" "$(echo "$ic" | head -n 3 | tr '\n' ';')"; fi
		done
		same_file "sqlite-$name output (two processes)" "$T/sqlite-$name.kernel.out" "$T/sqlite-$name.splitfs.out"
		same_file "sqlite-$name .dump" "$T/sqlite-$name.kernel.dump" "$T/sqlite-$name.splitfs.dump"
	done
	served sqlite3
fi

# --- tar: create (plain and gzip), list, compare, extract -------------------
cur=tar
if have tar gzip; then
	TAROPT=(--sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu)
	for how in kernel splitfs; do
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
	done
	same_file "tar archive" "$WORK/kernel/tar/tree.tar" "$WORK/splitfs/tar/tree.tar"
	same_file "tar.gz archive" "$WORK/kernel/tar/tree.tgz" "$WORK/splitfs/tar/tree.tgz"
	same_file "tar -tv listing" "$T/tar-list.kernel.out" "$T/tar-list.splitfs.out"
	same_tree "tar extracted (kernel vs input)" "$WORK/kernel/tar/x" "$IN/src"
	same_tree "tar extracted" "$WORK/kernel/tar/x" "$WORK/splitfs/tar/x" mtime
	same_tree "tar.gz extracted" "$WORK/kernel/tar/xz" "$WORK/splitfs/tar/xz" mtime
	served tar
fi

# --- cp (coreutils): reflink copy and plain copy, timestamps preserved -----
cur=cp
for how in kernel splitfs; do
	D=$WORK/$how/cp
	mkdir -p "$D"
	{
		on $how cp -a "$IN/src" "$D/reflink" &&
			on $how cp -R --preserve=all --reflink=never "$IN/src" "$D/copy"
	} 2>"$T/cp.$how.err"
	status cp $how $?
done
same_tree "cp -a (kernel vs input)" "$WORK/kernel/cp/reflink" "$IN/src" mtime
same_tree "cp -a" "$WORK/kernel/cp/reflink" "$WORK/splitfs/cp/reflink" mtime
same_tree "cp --reflink=never (kernel vs input)" "$WORK/kernel/cp/copy" "$IN/src" mtime
same_tree "cp --reflink=never" "$WORK/kernel/cp/copy" "$WORK/splitfs/cp/copy" mtime

# --- git: commits with modifications, log, fsck, gc, clone ------------------
cur=git
if have git; then
	mkdir -p "$T/home"
	export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=SplitFS GIT_AUTHOR_EMAIL=splitfs@example.com \
		GIT_COMMITTER_NAME=SplitFS GIT_COMMITTER_EMAIL=splitfs@example.com
	gitrun() { # HOW DATE GIT-ARGS...
		local how=$1 date=$2
		shift 2
		GIT_AUTHOR_DATE="@$date +0000" GIT_COMMITTER_DATE="@$date +0000" on $how git -C "$R" "$@"
	}
	for how in kernel splitfs; do
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
		# Read back without the library.
		git -C "$R" log --stat >"$T/git-log-native.$how.out" 2>&1
		git -C "$R" rev-parse HEAD 'HEAD^{tree}' >"$T/git-rev-native.$how.out" 2>&1
		git -C "$R" fsck --full --no-progress >"$T/git-fsck-native.$how.out" 2>&1 ||
			bad "git fsck --full ($how, native)" "$(head -n 3 "$T/git-fsck-native.$how.out" | tr '\n' ';')"
		git -C "$R" status --porcelain >"$T/git-status-native.$how.out" 2>&1
		git -C "$R" cat-file --batch-all-objects --batch-check >"$T/git-objects.$how.out" 2>&1
	done
	same_file "git log --stat" "$T/git-log.kernel.out" "$T/git-log.splitfs.out"
	same_file "git commit and tree hashes" "$T/git-rev.kernel.out" "$T/git-rev.splitfs.out"
	same_file "git status" "$T/git-status.kernel.out" "$T/git-status.splitfs.out"
	same_file "git fsck output" "$T/git-fsck.kernel.out" "$T/git-fsck.splitfs.out"
	same_file "git archive" "$T/git-archive.kernel.tar" "$T/git-archive.splitfs.tar"
	same_file "git log --stat (native read)" "$T/git-log-native.kernel.out" "$T/git-log-native.splitfs.out"
	same_file "git hashes (native read)" "$T/git-rev-native.kernel.out" "$T/git-rev-native.splitfs.out"
	same_file "git status (native read)" "$T/git-status-native.kernel.out" "$T/git-status-native.splitfs.out"
	same_file "git object set (native read)" "$T/git-objects.kernel.out" "$T/git-objects.splitfs.out"
	same_tree "git work tree" "$WORK/kernel/git/repo" "$WORK/splitfs/git/repo"
	same_tree "git clone work tree" "$WORK/kernel/git/clone" "$WORK/splitfs/git/clone"
	served git
fi

# --- rsync: full copy, delta transfer, in-place delta ----------------------
cur=rsync
if have rsync; then
	for how in kernel splitfs; do
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
	done
	same_tree "rsync delta result (kernel vs input)" "$WORK/kernel/rsync/r2" "$IN/src2" mtime
	same_tree "rsync delta result" "$WORK/kernel/rsync/r2" "$WORK/splitfs/rsync/r2" mtime
	same_tree "rsync in-place result (kernel vs input)" "$WORK/kernel/rsync/r" "$IN/src3" mtime
	same_tree "rsync in-place result" "$WORK/kernel/rsync/r" "$WORK/splitfs/rsync/r" mtime
	# rsync's generator (*deleting) and receiver (>f) print concurrently:
	# compare the itemized changes in sorted order.
	for f in "$T"/rsync-[12].*.out; do sort "$f" >"$f.sorted"; done
	same_file "rsync -i output (delta)" "$T/rsync-1.kernel.out.sorted" "$T/rsync-1.splitfs.out.sorted"
	same_file "rsync -i output (in place)" "$T/rsync-2.kernel.out.sorted" "$T/rsync-2.splitfs.out.sorted"
	for how in kernel splitfs; do
		if [ -s "$T/rsync-3.$how.out" ]; then
			bad "rsync -c finds nothing to do ($how)" "$(head -n 3 "$T/rsync-3.$how.out" | tr '\n' ';')"
		else
			ok "rsync -c finds nothing to do ($how)"
		fi
	done
	served rsync
fi

exit $rc
