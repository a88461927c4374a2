#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the benchmarks need beyond the tests: matplotlib for the plots, and
# the applications they run.
set -eu
[ -n "${SFS_BENCH_DEPS:-}" ] || SFS_BENCH_DEPS=1 "$(dirname "$0")/../tests/deps.sh"
need=()
PY=$([ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
"$PY" -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
# The application benchmarks (bench/workloads/{ycsb,redis,tpcc,utils}.sh):
# YCSB's driver is C++ on LevelDB; Redis with its benchmark client; TPC-C
# uses Debian's python3 and its sqlite3 module; git, tar, rsync and bc come
# with the tests' packages.
[ -e /usr/include/leveldb/db.h ] || need+=(libleveldb-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-benchmark >/dev/null 2>&1 || need+=(redis-tools)
/usr/bin/python3 -c 'import sqlite3' 2>/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi
