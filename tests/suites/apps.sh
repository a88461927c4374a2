#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real applications give byte-identical results with and without SplitFS,
# in every consistency mode.
# Each workload runs on the XFS image once in $WORK/kernel (no library: the
# reference) and once per mode of $MODES (SFS_MODES; default posix, sync,
# strict) in $WORK/MODE, under SplitFS with SPLITFS_MODE=MODE; the results
# are then read WITHOUT the library (cmp, diff -r, sha256 manifests, the
# applications' own checkers) and each mode's compared with the kernel's
# and, where there is one, with the expected input. A check on one mode
# names it: "ok sqlite-wal output (sync)".
# Applications: python3 (tests/apps/pyio.py, mktree.py), sqlite3 (rollback
# journal, WAL, mmap; two processes on one database), tar (+gzip), cp, git,
# rsync (delta and in-place), redis-server (AOF with appendfsync always and
# everysec, BGREWRITEAOF, BGSAVE, a restart under the library; the data set
# checked against tests/apps/redisgen.py's model after a restart without
# the library, from the AOF and from the RDB).
# Prints "ok NAME" or "FAIL NAME: DETAIL" per check, and the time each
# configuration took ("time ..."); exits 1 if any failed.
# The inputs are deterministic (tests/apps/*.py with fixed seeds, fixed
# timestamps); tests/deps.sh installs the applications.
# Knobs: SFS_MODES (the modes), SFS_APPS_CMD_TIMEOUT (seconds per command
# and per redis-server, default 120), SFS_APPS_NATIVE=1 (every run native:
# the workloads' own determinism), SFS_APPS_REDIS_SCALE (the fraction of
# the Redis workload run, default 1, the kernel run alike). Every mode runs
# the full inputs: sync and strict add only seconds per workload (see the
# "time" lines; on a shared 2-core machine the suite took 60-100 s with
# three modes and Redis, against 21-24 s for the kernel and posix alone).
. "$(dirname "$0")/../lib.sh"
APPS=$(cd "$(dirname "$0")/../apps" && pwd)
export LC_ALL=C TZ=UTC
T=$(mktemp -d /tmp/sfs-apps.XXXXXX) # captured outputs, manifests, sockets; off the image
RPID= # the redis-server being run (its timeout wrapper), ended at exit
cleanup() {
	[ -z "$RPID" ] || redis_kill
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
rc=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; rc=1; }

PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
declare -A missing=()
for app in sqlite3 tar gzip git rsync python3 diff cmp sha256sum redis-server redis-cli redis-check-aof redis-check-rdb; do
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
[ -n "${MODES// /}" ] || die "no mode to test (SFS_MODES is empty)"
for m in $MODES; do
	case $m in posix | sync | strict) ;; *) die "unknown mode '$m' in SFS_MODES (posix, sync, strict)" ;; esac
done

# on HOW CMD...: CMD natively (HOW kernel) or under SplitFS in mode HOW
# (posix, sync, strict), with the library's counters on (SPLITFS_STATS=1)
# for served below. The library is meant to write its table to
# SPLITFS_STATS_FILE; a table that arrives on CMD's stderr instead is moved
# there too, the rest of stderr goes on to the caller's stderr. A failing
# CMD is remembered for status.
# Each command gets SFS_APPS_CMD_TIMEOUT seconds (default 120): a hang is
# a failure of that workload, not of the whole run.
# SFS_APPS_NATIVE=1 runs the SplitFS side natively too: a check that the
# workloads themselves are deterministic.
on() {
	local how=$1 r
	shift
	local limit=(timeout -k 5 "${SFS_APPS_CMD_TIMEOUT:-120}")
	if [ "$how" = kernel ] || [ "${SFS_APPS_NATIVE:-0}" = 1 ]; then
		"${limit[@]}" "$@"
		r=$?
	else
		SPLITFS_MODE=$how SPLITFS_STATS=1 SPLITFS_STATS_FILE=$T/stats.$cur.$how "${limit[@]}" \
			"$SFS_CLI" run --root "$SFS_MNT" -- "$@" 2>"$T/raw.err"
		r=$?
		stats_split "$T/raw.err" "$T/stats.$cur.$how"
	fi
	[ $r = 0 ] || echo "$(basename "$1") ${*:2} (exit $r$([ $r = 124 ] && echo ", timed out"))" | cut -c 1-240 >"$T/step"
	return $r
}

# stats_split ERR STATS: the library's stats tables in ERR are appended to
# STATS, the rest of ERR goes to stderr.
stats_split() {
	awk -v f="$2" '/^splitfs stats: pid/ { s = 1 }
		s { print >> f; if (/^rusage /) s = 0; next }
		{ print > "/dev/stderr" }' "$1"
}

# clock / spent NAME HOW: the wall time of one configuration of a workload
# (since the last clock), printed at the end.
declare -A took=()
clock() { t0=$EPOCHREALTIME; }
spent() { took[$1.$2]=$(awk -v a="$t0" -v b="$EPOCHREALTIME" -v s="${took[$1.$2]:-0}" 'BEGIN { printf "%.1f", s + b - a }'); }

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

# served APP MODE: the library really served calls for APP in MODE (its
# counters show read/write family calls not passed to the kernel). Also
# shows the library's own messages, if any.
served() {
	[ "${SFS_APPS_NATIVE:-0}" = 1 ] && return
	local f=$T/stats.$1.$2
	local n tables
	n=$(awk '$1 ~ /^(read|write|pread|pwrite|readv|writev|mmap|xfer)$/ && $2 > $6 { s += $2 - $6 } END { print s + 0 }' "$f" 2>/dev/null)
	tables=$(grep -c '^splitfs stats: pid' "$f" 2>/dev/null)
	if [ "${n:-0}" -gt 0 ]; then
		ok "$1 served by splitfs ($2) ($n calls in ${tables} stats tables)"
	else
		bad "$1 served by splitfs ($2)" "no read/write call served by the library in ${tables:-0} stats tables (a program that closes stderr at exit loses the table unless SPLITFS_STATS_FILE is honoured)"
	fi
	grep '^splitfs:' "$f" 2>/dev/null | sort | uniq -c | sort -rn | head -n 5 | sed "s/^/    note ($1, $2): /"
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

# integrity NAME HOW DB: sqlite3's integrity_check of DB (without the
# library) says ok.
integrity() {
	local ic
	ic=$(sqlite3 "$3" 'PRAGMA integrity_check;' 2>&1)
	if [ "$ic" = ok ]; then ok "sqlite-$1 ($2) integrity_check"; else bad "sqlite-$1 ($2) integrity_check" "$(echo "$ic" | head -n 3 | tr '\n' ';')"; fi
}

for how in kernel $MODES; do mkdir -p "$WORK/$how"; done

# --- inputs (natively): the tree and two rounds of modifications ------------
IN=$WORK/input
$PY "$APPS/mktree.py" create "$IN/src" || die "mktree.py create"
cp -a "$IN/src" "$IN/src2" && $PY "$APPS/mktree.py" modify "$IN/src2" 1 || die "mktree.py modify 1"
cp -a "$IN/src2" "$IN/src3" && $PY "$APPS/mktree.py" modify "$IN/src3" 2 || die "mktree.py modify 2"

# --- python3: the tree generator and pyio.py --------------------------------
cur=python3
if have python3; then
	for how in kernel $MODES; do
		clock
		D=$WORK/$how/py
		on $how $PY "$APPS/mktree.py" create "$D/tree" 2>"$T/mktree.$how.err"
		status mktree $how $?
		on $how $PY "$APPS/pyio.py" "$D/io" >"$T/pyio.$how.out" 2>"$T/pyio.$how.err"
		status pyio $how $?
		spent $cur $how
	done
	same_tree "python3 mktree tree (kernel vs input)" "$WORK/kernel/py/tree" "$IN/src" mtime
	for m in $MODES; do
		same_tree "python3 mktree tree ($m)" "$WORK/kernel/py/tree" "$WORK/$m/py/tree" mtime
	done
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
	for m in $MODES; do served python3 $m; done
fi

# --- sqlite3: rollback journal, WAL, rollback journal with mmap ------------
cur=sqlite3
if have sqlite3; then
	for v in delete:DELETE:0 wal:WAL:0 mmap:DELETE:268435456; do
		IFS=: read -r name jm mm <<<"$v"
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

# --- tar: create (plain and gzip), list, compare, extract -------------------
cur=tar
if have tar gzip; then
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

# --- cp (coreutils): reflink copy and plain copy, timestamps preserved -----
cur=cp
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

# --- rsync: full copy, delta transfer, in-place delta ----------------------
cur=rsync
if have rsync; then
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

# --- redis: AOF (appendfsync always, everysec), rewrite, snapshot, restart --
# Per fsync policy and configuration, in $WORK/HOW/redis-POLICY:
#   1. redis-server on an empty dir: part 1 of tests/apps/redisgen.py through
#      redis-cli --pipe; part 2 through plain redis-cli (one command and one
#      reply at a time, the replies kept: with appendfsync always, one AOF
#      write and fdatasync per command); BGREWRITEAOF (a forked child writes
#      the new base); part 3 (pipe); SHUTDOWN (the AOF flushed and fsynced)
#   2. redis-server again on that dir (it reads the AOF): its data set must
#      be the model's after parts 1-3; part 4 (plain); BGSAVE (a forked child
#      writes dump.rdb); part 5 (pipe); SHUTDOWN
#   3. without the library: redis-check-aof and redis-check-rdb; the AOF
#      manifest and increment files (no timestamps in them) byte-identical
#      with the kernel run's; redis-server with the AOF (the data set must be
#      the model's after parts 1-5) and with the RDB only (--appendonly no:
#      after parts 1-4); DEBUG DIGEST of both equal to the kernel run's.
# Parts 1-2 and 4 go through the library's write path; after a fork the
# AOF descriptor is the child's too, so SplitFS leaves it to the kernel
# (README: fork), which parts 3 and 5 check.
# Steps 1 and 2 run under SplitFS in mode HOW, or natively (kernel). The
# servers listen only on a unix socket in $T/redis (--port 0), live at most
# SFS_APPS_CMD_TIMEOUT seconds each and are ended at exit whatever happens.
cur=redis
mkdir -p "$T/redis"
RS=$T/redis/server.sock
# redis_up HOW DIR ARGS...: redis-server on DIR under SplitFS in mode HOW
# (natively for kernel and native), waits until it answers PING.
redis_up() {
	local how=$1 dir=$2 i
	shift 2
	rm -f "$RS"
	local args=(--port 0 --unixsocket "$RS" --unixsocketperm 700 --dir "$dir" --daemonize no
		--pidfile "$T/redis/server.pid" --logfile "" --save "" --enable-debug-command yes "$@")
	local limit=(timeout -k 5 "${SFS_APPS_CMD_TIMEOUT:-120}")
	echo "=== redis-server ${args[*]} ($how)" >>"$T/redis/server.log"
	if [ "$how" = kernel ] || [ "$how" = native ] || [ "${SFS_APPS_NATIVE:-0}" = 1 ]; then
		"${limit[@]}" redis-server "${args[@]}" >>"$T/redis/server.log" 2>&1 &
		RPID=$!
	else
		SPLITFS_MODE=$how SPLITFS_STATS=1 SPLITFS_STATS_FILE=$T/stats.$cur.$how "${limit[@]}" \
			"$SFS_CLI" run --root "$SFS_MNT" -- redis-server "${args[@]}" >>"$T/redis/server.log" 2>"$T/redis/raw.err" &
		RPID=$!
	fi
	for ((i = 0; i < 600; i++)); do
		[ -S "$RS" ] && [ "$(redis-cli -s "$RS" PING 2>/dev/null)" = PONG ] && return 0
		kill -0 $RPID 2>/dev/null || break
		sleep 0.05
	done
	echo "redis-server ($how) on $dir $*: no answer; log: $(tail -n 3 "$T/redis/server.log" | tr '\n' ' ')" | cut -c 1-400 >"$T/step"
	redis_kill
	return 1
}
# redis_kill: ends the server (and its timeout wrapper), by their ids.
redis_kill() {
	local p
	p=$(cat "$T/redis/server.pid" 2>/dev/null)
	[ -n "$p" ] && [ "$(cat /proc/$p/comm 2>/dev/null)" = redis-server ] || p=
	[ -n "$RPID" ] && kill -TERM $RPID 2>/dev/null
	[ -n "$p" ] && kill -TERM $p 2>/dev/null
	sleep 0.5
	[ -n "$RPID" ] && kill -KILL $RPID 2>/dev/null
	[ -n "$p" ] && kill -KILL $p 2>/dev/null
	[ -n "$RPID" ] && wait $RPID 2>/dev/null
	rm -f "$T/redis/server.pid"
	RPID=
}
# redis_down HOW [ARGS]: SHUTDOWN [ARGS]; the server must exit 0.
redis_down() {
	local how=$1 r out
	shift
	out=$(timeout 60 redis-cli -s "$RS" SHUTDOWN "$@" 2>&1)
	if echo "$out" | grep -q '^\(ERR\|(error)\)'; then
		echo "redis-cli SHUTDOWN $*: $out" | head -n 1 >"$T/step"
		redis_kill
		return 1
	fi
	wait $RPID
	r=$?
	RPID=
	[ "$how" = kernel ] || [ "$how" = native ] || [ "${SFS_APPS_NATIVE:-0}" = 1 ] ||
		stats_split "$T/redis/raw.err" "$T/stats.$cur.$how" 2>>"$T/redis/server.log"
	[ $r = 0 ] && return 0
	echo "redis-server ($how) exit $r$([ $r = 124 ] && echo ", timed out"); log: $(tail -n 3 "$T/redis/server.log" | tr '\n' ' ')" | cut -c 1-400 >"$T/step"
	return 1
}
# redis_load PART OUT: part PART of the workload, its replies (or
# redis-cli --pipe's summary) to OUT; no command may fail (redis-cli exits 0
# on most errors: its output tells).
rerr='ERR\|WRONGTYPE\|(error)\|Error\|Could not connect'
redis_load() {
	local part=$1 out=$2 pipe=
	[ $((part % 2)) = 1 ] && pipe=--pipe
	$PY "$APPS/redisgen.py" cmds "$part" "$RSCALE" | timeout 120 redis-cli -s "$RS" $pipe >"$out" 2>&1
	if [ $? != 0 ] || grep -q "^\\($rerr\\)" "$out" || { [ -n "$pipe" ] && ! grep -q '^errors: 0, replies: ' "$out"; }; then
		echo "redis-cli $pipe (part $part): $(grep -m 1 "^\\($rerr\\|errors\\)" "$out" || tail -n 1 "$out")" | cut -c 1-400 >"$T/step"
		return 1
	fi
}
# redis_bg CMD FIELD STATUS: CMD (BGREWRITEAOF, BGSAVE) and wait until INFO
# persistence shows FIELD:0 and no rewrite scheduled; STATUS must be ok.
redis_bg() {
	local i info out
	out=$(redis-cli -s "$RS" "$1" 2>&1)
	case $out in Background*) ;; *) echo "redis-cli $1: $out" >"$T/step"; return 1 ;; esac
	for ((i = 0; i < 2400; i++)); do
		info=$(redis-cli -s "$RS" INFO persistence 2>&1 | tr -d '\r')
		echo "$info" | grep -q "^$2:0" && echo "$info" | grep -q '^aof_rewrite_scheduled:0' && break
		kill -0 $RPID 2>/dev/null || break
		sleep 0.05
	done
	echo "$info" | grep -q "^$3:ok" && return 0
	echo "redis-cli $1: $(echo "$info" | grep "^\($2\|$3\):\|$rerr" | tr '\n' ' ')" | cut -c 1-400 >"$T/step"
	return 1
}
# redis_read DIR NAME ARGS...: natively, redis-server on DIR with ARGS; its
# data set to $T/NAME.dump, its DEBUG DIGEST to $T/NAME.digest.
redis_read() {
	local dir=$1 name=$2
	shift 2
	rm -f "$T/$name.dump" "$T/$name.digest"
	redis_up native "$dir" "$@" || { echo "$(cat "$T/step")" >"$T/$name.dump"; rm -f "$T/step"; return 1; }
	$PY "$APPS/redisdump.py" "$RS" >"$T/$name.dump" 2>&1
	redis-cli -s "$RS" DEBUG DIGEST >"$T/$name.digest" 2>&1
	redis_down native NOSAVE || rm -f "$T/step"
}
# SFS_APPS_REDIS_SCALE (default 1): the fraction of redisgen.py's commands
# each part has (kernel and SplitFS runs alike).
RSCALE=${SFS_APPS_REDIS_SCALE:-1}
if have redis-server redis-cli redis-check-aof redis-check-rdb; then
	for p in 3 4 5; do $PY "$APPS/redisgen.py" expect $p "$RSCALE" >"$T/redis-expect-$p" || die "redisgen.py expect $p"; done
	for pol in always everysec; do
		for how in kernel $MODES; do
			clock
			D=$WORK/$how/redis-$pol
			N=redis-$pol.$how
			mkdir -p "$D"
			{
				redis_up $how "$D" --appendonly yes --appendfsync $pol &&
					redis_load 1 "$T/$N.p1" &&
					redis_load 2 "$T/$N.p2" &&
					redis_bg BGREWRITEAOF aof_rewrite_in_progress aof_last_bgrewrite_status &&
					redis_load 3 "$T/$N.p3" &&
					redis_down $how &&
					redis_up $how "$D" --appendonly yes --appendfsync $pol &&
					{ $PY "$APPS/redisdump.py" "$RS" >"$T/$N.mid.dump" || ! echo "redisdump.py after the restart failed" >"$T/step"; } &&
					redis_load 4 "$T/$N.p4" &&
					redis_bg BGSAVE rdb_bgsave_in_progress rdb_last_bgsave_status &&
					redis_load 5 "$T/$N.p5" &&
					redis_down $how
			} 2>"$T/redis-$pol.$how.err"
			r=$?
			[ -n "$RPID" ] && redis_kill
			status redis-$pol $how $r
			spent $cur $how
			# Read back without the library.
			if o=$(redis-check-aof "$D/appendonlydir/appendonly.aof.manifest" 2>&1) &&
				echo "$o" | grep -q 'All AOF files and manifest are valid'; then
				ok "redis-$pol redis-check-aof ($how)"
			else
				bad "redis-$pol redis-check-aof ($how)" "$(echo "$o" | grep -v '^\(\[offset\|Start\)' | tail -n 3 | tr '\n' ';')"
			fi
			if o=$(redis-check-rdb "$D/dump.rdb" 2>&1) && echo "$o" | grep -q 'RDB looks OK'; then
				ok "redis-$pol redis-check-rdb ($how)"
			else
				bad "redis-$pol redis-check-rdb ($how)" "$(ls "$D/dump.rdb" 2>&1 >/dev/null | sed 's/$/; /')$(echo "$o" | tail -n 3 | tr '\n' ';')"
			fi
			ls "$D/appendonlydir" >"$T/$N.aofdir" 2>&1
			redis_read "$D" $N.aof --appendonly yes --aof-load-truncated no
			redis_read "$D" $N.rdb --appendonly no
			# Against the model: the kernel run checks the model, the others SplitFS.
			same_file "redis-$pol data set after the restart in step 2 ($how)" "$T/redis-expect-3" "$T/$N.mid.dump"
			same_file "redis-$pol data set loaded from the AOF ($how)" "$T/redis-expect-5" "$T/$N.aof.dump"
			same_file "redis-$pol data set loaded from the RDB ($how)" "$T/redis-expect-4" "$T/$N.rdb.dump"
		done
		K=redis-$pol.kernel
		for m in $MODES; do
			N=redis-$pol.$m
			cat "$T/$K".p[135] >"$T/$K.pipe" 2>/dev/null
			cat "$T/$N".p[135] >"$T/$N.pipe" 2>/dev/null
			same_file "redis-$pol redis-cli --pipe summaries ($m)" "$T/$K.pipe" "$T/$N.pipe"
			same_file "redis-$pol replies of part 2 ($m)" "$T/$K.p2" "$T/$N.p2"
			same_file "redis-$pol replies of part 4 ($m)" "$T/$K.p4" "$T/$N.p4"
			same_file "redis-$pol appendonlydir file names ($m)" "$T/$K.aofdir" "$T/$N.aofdir"
			for f in $(grep -v '\.rdb$' "$T/$K.aofdir"); do # the manifest and the increments
				same_file "redis-$pol $f ($m)" "$WORK/kernel/redis-$pol/appendonlydir/$f" "$WORK/$m/redis-$pol/appendonlydir/$f"
			done
			same_file "redis-$pol DEBUG DIGEST from the AOF ($m)" "$T/$K.aof.digest" "$T/$N.aof.digest"
			same_file "redis-$pol DEBUG DIGEST from the RDB ($m)" "$T/$K.rdb.digest" "$T/$N.rdb.digest"
		done
	done
	for m in $MODES; do served redis $m; done
fi

# --- time per workload and configuration -----------------------------------
for app in python3 sqlite3 tar cp git rsync redis; do
	line=""
	for how in kernel $MODES; do line+=" $how ${took[$app.$how]:-?}s"; done
	echo "time $app:$line"
done

exit $rc
