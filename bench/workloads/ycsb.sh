#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# YCSB on LevelDB (the paper's §5 key-value store): 16 B keys, 1 KiB values;
# load (insert RECORDS, sync=false), load_sync (a separate database, every
# insert with WriteOptions.sync=true: an fdatasync of the log each), then
# workloads A (50/50 read/update), B (95/5), C (read only), F (read-modify-
# write), D (read latest, 5% insert) and E (scans, 5% insert), zipfian keys,
# fixed seeds (bench/src/ycsb_leveldb.cc). ops/s per phase, higher is better.
# The driver checks every value it reads and the whole database at the end,
# and prints nothing unless all of it passed.
# needs: file:/usr/include/leveldb/db.h g++
set -eu -o pipefail
case $BENCH_SCALE in
smoke) records=5000 ops=5000 sync=200 wbuf=524288 ;;
quick) records=10000 ops=10000 sync=500 wbuf=1048576 ;;
*) records=100000 ops=100000 sync=3000 wbuf=4194304 ;; # LevelDB's default buffer
esac
out=$($RUN "$BENCH_BIN/ycsb_leveldb" "$BENCH_DIR" "$records" "$ops" "$sync" "$wbuf")
printf '%s\n' "$out"
