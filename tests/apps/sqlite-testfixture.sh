#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds SQLite's own test harness, `testfixture` (a Tcl shell with SQLite
# compiled in and the test hooks on), from the source Debian 12 ships for its
# sqlite3 package (3.40.1, the upstream tarball from Debian's archive, checked
# against the sha256 of Debian's .dsc), into DIR/testfixture, with the test
# scripts in DIR/src/test. Installs what it needs when missing (tcl-dev,
# curl, xz-utils). Does nothing when DIR/testfixture is already there.
# Usage: tests/apps/sqlite-testfixture.sh DIR
set -eu
DIR=${1:?usage: sqlite-testfixture.sh DIR}
VER=3.40.1
TARBALL=sqlite3_$VER.orig.tar.xz
URL=http://deb.debian.org/debian/pool/main/s/sqlite3/$TARBALL
SHA256=aaa776260ab4dc976db34aa7891819484c8676b5b2783123ebc6301e2ca5d655
[ -x "$DIR/testfixture" ] && [ -f "$DIR/src/test/testrunner.tcl" ] && exit 0

need=()
[ -e /usr/lib/tcl8.6/tclConfig.sh ] || need+=(tcl-dev)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v xz >/dev/null 2>&1 || need+=(xz-utils)
if [ ${#need[@]} -gt 0 ]; then
	echo "sqlite-testfixture: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi

rm -rf "$DIR"
mkdir -p "$DIR"
curl -fsS -o "$DIR/$TARBALL" "$URL"
echo "$SHA256  $DIR/$TARBALL" | sha256sum -c --quiet -
tar -xJf "$DIR/$TARBALL" -C "$DIR"
mv "$DIR/sqlite3-$VER" "$DIR/src"
rm "$DIR/$TARBALL"
mkdir "$DIR/obj"
(cd "$DIR/obj" && ../src/configure --with-tcl=/usr/lib/tcl8.6 >configure.log 2>&1 &&
	make -j"$(nproc)" testfixture >make.log 2>&1) || {
	echo "sqlite-testfixture: the build failed (logs in $DIR/obj)" >&2
	exit 1
}
mv "$DIR/obj/testfixture" "$DIR/testfixture"
rm -rf "$DIR/obj"
echo "sqlite-testfixture: built $DIR/testfixture (SQLite $VER)"
