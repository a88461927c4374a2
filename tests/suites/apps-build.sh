#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A C build under SplitFS gives the kernel's results, in every consistency
# mode (tests/apps/lib.sh: how runs are made and compared): this project's
# own sources built by its own Makefile with make -j2 (gcc, cc1, as and
# collect2/ld.bfd started by the hundred, dependency files, objects written
# and read back), then by hand a static archive (ar), the library linked
# again with gold (which sizes its output with fallocate and writes it
# through a shared mapping, no write call), a stripped copy and a
# debug-info file (strip and objcopy write a temporary file and rename it).
# Then one source changed: make must rebuild that object and what links it,
# and nothing else (its decisions come from stat's times). The build trees
# are byte-identical with the kernel run's (the paths are mapped away with
# -ffile-prefix-map, so that every configuration builds the same bytes in
# its own directory), make's second run rebuilds the same targets, and the
# kernel's CLI runs.
# One test: no test names.
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests
cur=build
SRC=$(cd "$(dirname "$0")/../.." && pwd)

if have make gcc ar ld.gold strip objcopy; then
	for how in kernel $MODES; do
		# The sources, copied natively: the input, not the workload.
		P=$WORK/$how/proj
		mkdir -p "$P"
		cp -a "$SRC/Makefile" "$SRC/splitfs.pc.in" "$SRC/src" "$SRC/cli" "$SRC/include" "$P/" ||
			die "copy the sources to $P"
	done
	for how in kernel $MODES; do
		clock
		P=$WORK/$how/proj
		flags=(CFLAGS="-O2 -g -ffile-prefix-map=$P=." V=1)
		{
			cd "$P" &&
				on $how make -j2 "${flags[@]}" all >"$T/make1.$how.out" &&
				objs=$(find build/obj/lib -name '*.o' | LC_ALL=C sort) &&
				on $how ar rcs build/libsplitfs.a $objs &&
				# Relative names: gold writes its output's name into it.
				on $how gcc -shared -fuse-ld=gold -Wl,--build-id -o build/libsplitfs-gold.so \
					$objs -ldl -lpthread &&
				on $how strip -o build/splitfs.stripped build/splitfs &&
				on $how objcopy --only-keep-debug build/libsplitfs.so build/libsplitfs.debug &&
				on $how strip --strip-debug build/libsplitfs-gold.so &&
				# The change: a source one second newer than every object.
				echo '/* changed */' >>"$P/src/util/names.c" &&
				touch -d "@$(($(date +%s) + 1))" "$P/src/util/names.c" &&
				on $how make -j2 "${flags[@]}" all >"$T/make2.$how.out"
		} 2>"$T/build.$how.err"
		status build $how $?
		cd "$WORK" || die "cd $WORK"
		spent $cur $how
	done
	# What make's second run built: the objects and links it ran, in order
	# of their names (two jobs interleave).
	rebuilt() { grep -oE -- ' -o [^ ]+' "$1" 2>/dev/null | LC_ALL=C sort | tr '\n' ' '; }
	k=$WORK/kernel/proj/build
	if [ -x "$k/splitfs" ] && "$k/splitfs" version >/dev/null 2>&1; then
		ok "the kernel's build runs (splitfs version)"
	else
		bad "the kernel's build runs" "$k/splitfs version failed"
	fi
	# The kernel's second run: the changed source's objects, the library's
	# link, and no other object.
	r=$(rebuilt "$T/make2.kernel.out")
	others=$(tr ' ' '\n' <<<"$r" | grep '\.o$' | grep -vc '/names\.o$')
	if [[ $r == *names.o* && $r == *libsplitfs.so* && $others == 0 ]]; then
		ok "make rebuilt names.o and the links after the change (kernel): $r"
	else
		bad "make's second run (kernel)" "rebuilt: ${r:-nothing}"
	fi
	for m in $MODES; do
		same_tree "build tree ($m)" "$k" "$WORK/$m/proj/build"
		rm=$(rebuilt "$T/make2.$m.out")
		if [ "$rm" = "$r" ]; then
			ok "make rebuilt what the kernel's did ($m)"
		else
			bad "make's second run ($m)" "rebuilt ${rm:-nothing}; the kernel's: $r"
		fi
		served build $m
	done
fi
apps_end
