#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The study behind table.md: pgbench's TPC-B-like transactions per second
# on a fresh cluster (scale 10) on MNT, in one of these setups:
#   kernel         server and client without the library
#   posix          both under the library, POSIX mode (the bench's setup)
#   server         the server under the library, pgbench without it
#   client         pgbench under the library, the server without it
#   walout         both under the library, pg_wal on OTHER (outside the root)
#   unmanaged      both under the library, its root set to OTHER
#   thread         without the library, an idle thread in every process
#                  (THR: a preload that starts one; see table.md)
# usage: pgstudy.sh SETUP SECONDS [CLIENTS [pgbench args...]]
# env: MNT (default /mnt/t, the root), OTHER (/mnt/s), LIB (a copy of
# build/libsplitfs.so the user postgres can read), THR.
set -eu
setup=$1 secs=$2 clients=${3:-4}
shift $(($# < 3 ? $# : 3))
MNT=${MNT:-/mnt/t} OTHER=${OTHER:-/mnt/s}
B=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
d=$MNT/pgstudy w=$OTHER/pgstudy-wal
rm -rf "$d" "$w"
mkdir -p "$d"
chown postgres "$d"
chmod 700 "$d"
lib=(env SPLITFS_MODE=posix SPLITFS_ROOT="$MNT" LD_PRELOAD="$LIB")
srv=("${lib[@]}") cli=("${lib[@]}") initdb_args=()
case $setup in
kernel) srv=(env) cli=(env) ;;
posix) ;;
server) cli=(env) ;;
client) srv=(env) ;;
walout) mkdir -p "$w" && chown postgres "$w" && initdb_args=(-X "$w/wal") ;;
unmanaged) srv=(env SPLITFS_MODE=posix SPLITFS_ROOT="$OTHER" LD_PRELOAD="$LIB") cli=("${srv[@]}") ;;
thread) srv=(env LD_PRELOAD="$THR") cli=("${srv[@]}") ;;
*) echo "unknown setup $setup" >&2; exit 2 ;;
esac
S() { runuser -u postgres -- "${srv[@]}" "$@"; }
C() { runuser -u postgres -- "${cli[@]}" "$@"; }
cd /
S "$B/initdb" "${initdb_args[@]}" -D "$d/data" -A trust >/dev/null
S "$B/pg_ctl" -D "$d/data" -o "-k $d -p 5498 -c listen_addresses=''" -l "$d/log" -w start >/dev/null
S "$B/pgbench" -h "$d" -p 5498 -i -q -s 10 postgres >/dev/null 2>&1
C "$B/pgbench" -h "$d" -p 5498 -c "$clients" -j 2 -T "$secs" "$@" postgres 2>/dev/null |
	awk -v s="$setup" '/^tps/ {print s, $3}'
S "$B/pg_ctl" -D "$d/data" -m fast -w stop >/dev/null
rm -rf "$d" "$w"
