#!/usr/bin/env bash
# Issue 15's first rows, by hand: tar -x, cp -a and git add + commit of
# /usr/include (22,486 files, 295 MB here) and the small-file cycle
# (cycle.c, 4,000 files), the kernel and the library (POSIX mode)
# alternating, the order swapped each round. Every copy is compared with
# /usr/include (diff -r, without the library), the repository checked
# (git fsck). Git runs no gc or maintenance of its own (the timed
# commands alone, no background process writing meanwhile).
#   include.sh MNT LIB [ROUNDS]     (MNT: an image made by `splitfs image up`)
set -eu -o pipefail
mnt=$1 lib=$(readlink -f "$2") rounds=${3:-3}
here=$(dirname "$(readlink -f "$0")")
tmp=$(mktemp -d /tmp/include-study.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tar -C /usr -cf "$tmp/include.tar" include
cc -O2 -o "$tmp/cycle" "$here/cycle.c"
export GIT_CONFIG_NOSYSTEM=1 HOME=$tmp XDG_CONFIG_HOME=$tmp \
	GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=gc.auto GIT_CONFIG_VALUE_0=0 \
	GIT_CONFIG_KEY_1=maintenance.auto GIT_CONFIG_VALUE_1=false \
	GIT_AUTHOR_NAME=s GIT_AUTHOR_EMAIL=s@localhost GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' \
	GIT_COMMITTER_NAME=s GIT_COMMITTER_EMAIL=s@localhost GIT_COMMITTER_DATE='2020-01-01T00:00:00Z'
under() { # CFG CMD...: CMD on the kernel or under the library
	local cfg=$1
	shift
	if [ "$cfg" = kernel ]; then "$@"; else SPLITFS_ROOT=$mnt LD_PRELOAD=$lib "$@"; fi
}
timed() { # CFG CMD...: seconds CMD took
	local s e
	s=$(date +%s%N)
	under "$@" >/dev/null
	e=$(date +%s%N)
	echo "scale=3; ($e - $s) / 1000000000" | bc
}
for r in $(seq "$rounds"); do
	order="kernel posix"
	[ $((r % 2)) = 0 ] && order="posix kernel"
	for cfg in $order; do
		d=$mnt/inc.$cfg
		rm -rf "$d"
		mkdir -p "$d/cyc"
		sync -f "$mnt"
		echo 3 >/proc/sys/vm/drop_caches
		tx=$(timed $cfg tar -C "$d" -xf "$tmp/include.tar")
		cp=$(timed $cfg cp -a "$d/include" "$d/copy")
		under $cfg git -C "$d/include" init -q
		ga=$(timed $cfg git -C "$d/include" add -A)
		gc=$(timed $cfg git -C "$d/include" commit -q -m include)
		cyc=$(under $cfg "$tmp/cycle" "$d/cyc" 4000)
		diff -r --no-dereference -x .git /usr/include "$d/include" >/dev/null
		diff -r --no-dereference /usr/include "$d/copy" >/dev/null
		git -C "$d/include" fsck --no-progress 2>&1 | { ! grep -q .; }
		[ -z "$(git -C "$d/include" status --porcelain)" ]
		total=$(echo "$tx + $cp + $ga + $gc" | bc)
		echo "round $r $cfg tar_x $tx cp_a $cp git_add $ga git_commit $gc total $total cycle_us $cyc"
		rm -rf "$d"
	done
done
