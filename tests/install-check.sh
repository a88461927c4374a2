#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make install` as a distribution runs it (issue 16): a staged install
# (DESTDIR=TMP PREFIX=/usr) holds the library under its versioned name with
# the soname and both links, the CLI, the header, splitfs.pc and both man
# pages; pkg-config finds the library; the man pages render without
# warnings; the staged CLI's `splitfs run` preloads the staged library. A
# second install (PREFIX=TMP/prefix) checks what a program built with
# pkg-config links against, and that a CLI moved away from its tree finds
# the library at the LIBDIR compiled into it. `make uninstall` then leaves
# no file behind. build/splitfs still preloads build/libsplitfs.so.
#
#   tests/install-check.sh [DIR]   DIR: the --root of the `splitfs run`
#                                  checks (default: a directory in /tmp)
# Needs make, cc, readelf, pkg-config, man and groff (tests/deps.sh).
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
tmp=$(mktemp -d /tmp/splitfs-install.XXXXXX)
chmod 755 "$tmp" # man(1) may read the pages as another user
# The installs below rebuild build/inst/ (the installed CLI) for their
# PREFIX; leave it as a plain `make` builds it.
trap 'make -s all >/dev/null 2>&1; rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL $*"
	exit 1
}
ok() { echo "ok   $*"; }

for tool in make cc readelf pkg-config man groff; do
	command -v "$tool" >/dev/null || fail "$tool not found (tests/deps.sh installs it)"
done
VERSION=$(sed -n 's/^VERSION := //p' Makefile)
MAJOR=${VERSION%%.*}
[ -n "$VERSION" ] || fail "no VERSION in the Makefile"
RUNDIR=${1:-$tmp/root}
mkdir -p "$RUNDIR"

# --- the staged install ------------------------------------------------------------
S=$tmp/stage
make -s install DESTDIR="$S" PREFIX=/usr >"$tmp/make.log" 2>&1 ||
	{ cat "$tmp/make.log"; fail "make install DESTDIR=$S PREFIX=/usr"; }
lib=$S/usr/lib
[ -f "$lib/libsplitfs.so.$VERSION" ] && [ ! -L "$lib/libsplitfs.so.$VERSION" ] ||
	fail "no $lib/libsplitfs.so.$VERSION"
soname=$(readelf -d "$lib/libsplitfs.so.$VERSION" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libsplitfs.so.$MAJOR" ] || fail "SONAME is '$soname', not libsplitfs.so.$MAJOR"
[ "$(readlink "$lib/libsplitfs.so.$MAJOR")" = "libsplitfs.so.$VERSION" ] ||
	fail "libsplitfs.so.$MAJOR does not link to libsplitfs.so.$VERSION"
[ "$(readlink "$lib/libsplitfs.so")" = "libsplitfs.so.$MAJOR" ] ||
	fail "libsplitfs.so does not link to libsplitfs.so.$MAJOR"
ok "library: libsplitfs.so.$VERSION, SONAME $soname, links libsplitfs.so.$MAJOR and libsplitfs.so"
for f in usr/bin/splitfs usr/include/splitfs.h usr/lib/pkgconfig/splitfs.pc \
	usr/share/man/man1/splitfs.1 usr/share/man/man7/libsplitfs.7; do
	[ -f "$S/$f" ] || fail "not installed: /$f"
done
[ -x "$S/usr/bin/splitfs" ] || fail "/usr/bin/splitfs is not executable"
cmp -s include/splitfs.h "$S/usr/include/splitfs.h" || fail "the installed header differs"
! grep -q "$S" "$S/usr/bin/splitfs" "$S/usr/lib/pkgconfig/splitfs.pc" ||
	fail "DESTDIR ($S) is compiled into the CLI or splitfs.pc"
ok "CLI, header, splitfs.pc, splitfs.1, libsplitfs.7 installed; DESTDIR not compiled in"

pc() { PKG_CONFIG_SYSROOT_DIR=$S PKG_CONFIG_LIBDIR=$S/usr/lib/pkgconfig pkg-config "$@"; }
pc --exists splitfs || fail "pkg-config does not find splitfs"
[ "$(pc --modversion splitfs)" = "$VERSION" ] || fail "pkg-config --modversion: $(pc --modversion splitfs)"
flags=$(pc --cflags --libs splitfs)
grep -qw -- -lsplitfs <<<"$flags" || fail "pkg-config --libs: '$flags'"
[ "$(pc --variable=libdir splitfs)" = "$S/usr/lib" ] || fail "libdir: $(pc --variable=libdir splitfs)"
ok "pkg-config: splitfs $VERSION, '$flags', libdir $(pc --variable=libdir splitfs)"

for page in man1/splitfs.1 man7/libsplitfs.7; do
	f=$S/usr/share/man/$page
	out=$(MANWIDTH=80 man -l "$f" 2>"$tmp/man.err") || fail "man -l $page: $(cat "$tmp/man.err")"
	grep -q "^NAME" <<<"$out" || fail "man -l $page shows no NAME section"
	warn=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
	[ -z "$warn" ] || fail "groff warns on $page: $warn"
	ok "man -l $page renders ($(wc -l <<<"$out") lines), groff -ww: no warnings"
done
# Every option of `splitfs run` and every SPLITFS_* variable is in splitfs(1).
page=$(MANWIDTH=200 man -l "$S/usr/share/man/man1/splitfs.1" 2>/dev/null)
for word in $(grep -o '"--[a-z-]*"' cli/cmd_run.c | tr -d '"') \
	$(grep -o '"SPLITFS_[A-Z_]*"' src/util/options.c | tr -d '"'); do
	grep -q -- "$word" <<<"$page" || fail "splitfs(1) does not mention $word"
done
ok "splitfs(1) names every run option and SPLITFS_* variable"

# --- the staged CLI -------------------------------------------------------------
cli=$S/usr/bin/splitfs
[ "$("$cli" version)" = "splitfs $VERSION" ] || fail "splitfs version: $("$cli" version)"
"$cli" --help | grep -q "^usage: splitfs" || fail "splitfs --help"
ok "$cli version: splitfs $VERSION; --help"

# run: the program is ROOT/usr/bin/splitfs, so it preloads ROOT/usr/lib/libsplitfs.so.N;
# SPLITFS_VERBOSE shows the library started; the file is written and read under it.
check_run() { # CLI EXPECTED-LIBRARY LABEL
	local out r=0
	out=$(SPLITFS_VERBOSE=1 "$1" run --root "$RUNDIR" -- sh -c \
		'printf "%s\n" "$LD_PRELOAD"; echo installed >"$0/f"; cat "$0/f"; rm -f "$0/f"' \
		"$RUNDIR" 2>"$tmp/run.err") || r=$?
	[ $r = 0 ] || { cat "$tmp/run.err"; fail "$3: splitfs run (exit $r)"; }
	[ "$(sed -n 1p <<<"$out")" = "$2" ] || fail "$3: LD_PRELOAD is '$(sed -n 1p <<<"$out")', not $2"
	[ "$(sed -n 2p <<<"$out")" = installed ] || fail "$3: the file read back: '$out'"
	grep -q "^splitfs: option 'root'" "$tmp/run.err" ||
		{ cat "$tmp/run.err"; fail "$3: the library did not start (no SPLITFS_VERBOSE lines)"; }
	ok "$3: splitfs run --root $RUNDIR preloads $2"
}
check_run "$cli" "$lib/libsplitfs.so.$MAJOR" "staged CLI"
"$cli" run --root "$RUNDIR" -- /bin/true || fail "splitfs run -- /bin/true"
set +e
"$cli" run --root "$RUNDIR" -- sh -c 'exit 7'
r=$?
set -e
[ $r = 7 ] || fail "splitfs run -- sh -c 'exit 7' exited $r"
ok "staged CLI: run -- /bin/true exits 0, the command's own status comes back (7)"
check_run "$ROOT/build/splitfs" "$ROOT/build/libsplitfs.so" "build tree CLI"

# --- an install at its real prefix: a program linked with pkg-config; the CLI moved ---
P=$tmp/prefix
make -s install PREFIX="$P" >"$tmp/make.log" 2>&1 ||
	{ cat "$tmp/make.log"; fail "make install PREFIX=$P"; }
cat >"$tmp/prog.c" <<'EOF'
#include <splitfs.h>
#include <stdio.h>
int main(void)
{
	printf("%s\n", splitfs_version());
	return 0;
}
EOF
flags=$(PKG_CONFIG_LIBDIR=$P/lib/pkgconfig pkg-config --cflags --libs splitfs)
# shellcheck disable=SC2086 # the flags are words
cc -o "$tmp/prog" "$tmp/prog.c" $flags || fail "cc prog.c $flags"
readelf -d "$tmp/prog" | grep -q "NEEDED.*\[libsplitfs.so.$MAJOR\]" ||
	fail "prog does not need libsplitfs.so.$MAJOR: $(readelf -d "$tmp/prog" | grep NEEDED)"
[ "$(LD_LIBRARY_PATH=$P/lib "$tmp/prog")" = "$VERSION" ] || fail "prog does not print $VERSION"
ok "cc \$(pkg-config --cflags --libs splitfs): NEEDED libsplitfs.so.$MAJOR, splitfs_version() = $VERSION"
mkdir "$tmp/elsewhere"
cp "$P/bin/splitfs" "$tmp/elsewhere/splitfs"
check_run "$tmp/elsewhere/splitfs" "$P/lib/libsplitfs.so.$MAJOR" "CLI moved out of PREFIX"
rm "$P/lib/libsplitfs.so.$VERSION"
set +e
err=$("$tmp/elsewhere/splitfs" run --root "$RUNDIR" -- /bin/true 2>&1)
r=$?
set -e
[ $r = 1 ] && grep -q "not found.*$P/lib/libsplitfs.so.$MAJOR" <<<"$err" ||
	fail "without its library: exit $r: $err"
ok "CLI without its library: exit 1: $err"

# --- uninstall ----------------------------------------------------------------------
make -s uninstall DESTDIR="$S" PREFIX=/usr >"$tmp/make.log" 2>&1 ||
	{ cat "$tmp/make.log"; fail "make uninstall DESTDIR=$S PREFIX=/usr"; }
make -s uninstall PREFIX="$P" >"$tmp/make.log" 2>&1 ||
	{ cat "$tmp/make.log"; fail "make uninstall PREFIX=$P"; }
left=$(find "$S" "$P" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
ok "make uninstall removes every file"
echo "install check passed"
