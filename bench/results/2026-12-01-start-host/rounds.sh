#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Process start, by hand: ROUNDS rounds, each running every configuration
# once in turn (kernel, an empty preloaded library, the library BEFORE,
# the library AFTER), so that the host's drift falls on all of them alike.
#   rounds.sh ROOT BEFORE.so AFTER.so [ROUNDS]
# childenv (this folder) spawns with the library in the children's
# environment only; build/bench/spawn runs under it, as a shell does.
set -eu
root=$1 before=$2 after=$3 rounds=${4:-10}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/childenv" "$here/childenv.c"
echo 'void splitfs_empty(void) {}' >"$tmp/empty.c"
cc -O2 -shared -fPIC -o "$tmp/empty.so" "$tmp/empty.c"
cp /usr/include/stdio.h "$tmp/s.h"
spawn="$top/build/bench/spawn"
us() { sed -n "s/.*\"$1\",\"value\":\\([0-9.]*\\).*/\\1/p"; }
echo "round true:kernel empty before after | cat:kernel empty before after | spawn:kernel before after | fork:kernel before after"
for r in $(seq "$rounds"); do
	row="$r"
	for lib in "" "$tmp/empty.so" "$before" "$after"; do
		env=()
		[ -n "$lib" ] && env=(LD_PRELOAD="$lib" SPLITFS_ROOT="$root")
		row+=" $("$tmp/childenv" 400 /bin/true "${env[@]}")"
	done
	row+=" |"
	for lib in "" "$tmp/empty.so" "$before" "$after"; do
		env=()
		[ -n "$lib" ] && env=(LD_PRELOAD="$lib" SPLITFS_ROOT="$root")
		row+=" $("$tmp/childenv" 300 "/bin/cat $tmp/s.h" "${env[@]}")"
	done
	for kind in spawn fork; do
		row+=" |"
		flag=()
		[ $kind = fork ] && flag=(--fork)
		row+=" $("$spawn" "${flag[@]}" "$root" 400 /bin/true | us ${kind}_us)"
		for lib in "$before" "$after"; do
			row+=" $(SPLITFS_ROOT="$root" LD_PRELOAD="$lib" "$spawn" "${flag[@]}" "$root" 400 /bin/true | us ${kind}_us)"
		done
	done
	echo "$row"
done
