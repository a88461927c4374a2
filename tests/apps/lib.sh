# SPDX-License-Identifier: Apache-2.0
# Sourced by the application suites (tests/suites/apps-*.sh, one per
# application): real applications give byte-identical results with and
# without SplitFS, in every consistency mode.
# Each workload runs on the XFS image once in $WORK/kernel (no library: the
# reference) and once per mode of $MODES (SFS_MODES; default posix, sync,
# strict) in $WORK/MODE, under SplitFS with SPLITFS_MODE=MODE; the results
# are then read WITHOUT the library (cmp, diff -r, sha256 manifests, the
# applications' own checkers) and each mode's compared with the kernel's
# and, where there is one, with the expected input. A check on one mode
# names it: "ok sqlite-wal output (sync)".
# A suite prints "ok NAME" or "FAIL NAME: DETAIL" per check, and the time
# each configuration took ("time APP: ..."); exits 1 if any failed
# (apps_end).
# The inputs are deterministic (tests/apps/*.py with fixed seeds, fixed
# timestamps); tests/deps.sh installs the applications. Each suite makes
# the inputs it needs itself (mk_input): no suite depends on another's run.
# Knobs: SFS_MODES (the modes), SFS_APPS_CMD_TIMEOUT (seconds per command
# (and per redis-server), default 120), SFS_APPS_NATIVE=1 (every run native:
# the workloads' own determinism). Every mode runs the full inputs: sync
# and strict add only seconds per workload (see the "time" lines; on a
# shared, loaded 2-core machine, with three modes: python3 10 s, sqlite3
# 48 s, tar 12 s, cp 5 s, git 28 s, rsync 7 s, redis 22 s; 131 s in all,
# as the single apps suite took before the split).
# Provides, besides tests/lib.sh's: APPS (this directory), PY, T (a private
# directory off the image), rc, ok/bad, have, on, stats_split, clock/spent,
# manifest, same_file, same_tree, served, status, mk_input, apps_end.
# Set cur (the application's name) before the first `on`; a suite with
# something to end at exit (a server) defines apps_cleanup.
. "$(dirname "$0")/../lib.sh"
APPS=$(cd "$(dirname "$0")/../apps" && pwd)
export LC_ALL=C TZ=UTC
T=$(mktemp -d /tmp/sfs-apps.XXXXXX) # captured outputs, manifests, sockets; off the image
cleanup() {
	[ "$(type -t apps_cleanup)" != function ] || apps_cleanup
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
rc=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1: $2"; rc=1; }

PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3)
# python3 builds every input; diff, cmp and sha256sum read every result.
[ -n "$PY" ] && [ -x "$PY" ] || die "python3 not found (tests/deps.sh installs it); it builds every input"
for app in diff cmp sha256sum; do
	command -v $app >/dev/null 2>&1 || die "$app not found (tests/deps.sh installs diffutils/coreutils)"
done
# have APP...: true if installed, else a FAIL line (never a silent skip).
have() {
	local a
	for a; do
		if ! command -v "$a" >/dev/null 2>&1; then
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

for how in kernel $MODES; do mkdir -p "$WORK/$how"; done

# mk_input [ROUNDS]: natively, the input tree $IN/src (tests/apps/mktree.py)
# and, for ROUNDS 1 or 2, $IN/src2 and $IN/src3: copies modified by one and
# two rounds. Deterministic, and a second or two: each suite makes its own.
IN=$WORK/input
mk_input() {
	$PY "$APPS/mktree.py" create "$IN/src" || die "mktree.py create"
	[ "${1:-0}" -ge 1 ] || return 0
	cp -a "$IN/src" "$IN/src2" && $PY "$APPS/mktree.py" modify "$IN/src2" 1 || die "mktree.py modify 1"
	[ "${1:-0}" -ge 2 ] || return 0
	cp -a "$IN/src2" "$IN/src3" && $PY "$APPS/mktree.py" modify "$IN/src3" 2 || die "mktree.py modify 2"
}

# apps_end: the time line of $cur (per configuration), and the exit.
apps_end() {
	local line="" how
	for how in kernel $MODES; do line+=" $how ${took[$cur.$how]:-?}s"; done
	echo "time $cur:$line"
	exit $rc
}
