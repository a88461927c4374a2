#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The library's layers read top-down (make check runs this):
#  1. No object of the library outside src/interpose/ calls one of the
#     library's own exported names (the global list of src/libsplitfs.map):
#     inside the library such a call would go through the wrappers again
#     (re-entering them, before init even), so every internal system call
#     goes through sfs_real (src/sys/real.h). Checked with nm on the
#     objects of $SFS_BUILD (default build), which must be built.
#  2. Lower folders include nothing from the folders above them:
#     src/sys/ and src/util/ (the leaf layer) only each other, and
#     oplog/, staging/, relink/, map/ nothing from fs/ (upper layers
#     register ops tables with them instead) nor interpose/ or init.h.
# Exits 0 when both hold, 1 otherwise (each violation printed).
set -u
build=${SFS_BUILD:-build}
objdir=$build/obj/lib/src
map=src/libsplitfs.map
fail=0

if [ ! -d "$objdir" ]; then
	echo "layering: no $objdir (build the library first: make BUILD=$build)"
	exit 1
fi

# The names between "global:" and "local:", one a line.
names=$(sed -n '/global:/,/local:/p' "$map" | sed -e '/global:/d' -e '/local:/d' \
	-e 's|/\*.*\*/||g' | tr ';' '\n' | tr -d ' \t' | sed '/^$/d' | sort -u)
if [ -z "$names" ]; then
	echo "layering: no global names read from $map"
	exit 1
fi
nobj=0
for o in $(find "$objdir" -name '*.o' ! -path "$objdir/interpose/*" | sort); do
	nobj=$((nobj + 1))
	# Undefined symbols; a versioned reference (name@GLIBC_x) counts too.
	bad=$(nm -u "$o" | awk '{ sub(/@.*/, "", $2); print $2 }' | sort -u |
		grep -Fx "$names")
	for n in $bad; do
		echo "layering: ${o#"$build"/obj/lib/} calls the exported $n (use sfs_real.$n)"
		fail=1
	done
done
if [ "$nobj" -eq 0 ]; then
	echo "layering: no objects under $objdir"
	exit 1
fi

# Includes (quoted ones: the library's own headers) that leave the layer.
# $1: folders, $2: extended regex of forbidden include paths.
check_includes() {
	for f in $(find $1 -name '*.[ch]' | sort); do
		grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | grep -E "$2" |
			while IFS= read -r line; do
				echo "layering: $f:$line (an upper layer's header)"
			done | grep . && fail=1
	done
	return 0
}
leaf_up='"\.\./(fs|oplog|staging|relink|map|interpose)/|"\.\./init\.h"'
check_includes "src/sys src/util" "$leaf_up"
mid_up='"\.\./(fs|interpose)/|"\.\./init\.h"'
check_includes "src/oplog src/staging src/relink src/map" "$mid_up"

if [ "$fail" -ne 0 ]; then
	echo "layering: FAIL"
	exit 1
fi
echo "layering: $nobj objects call no exported name; lower folders include no upper header"
exit 0
