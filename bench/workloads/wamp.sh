#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Write amplification (the VSM paper's Figure 7): random overwrites of 1 KiB
# to 1 MiB, each followed by fsync, on a pre-written 64 MiB file (16 smoke);
# bytes the block device wrote (/sys/class/block/<dev>/stat, sectors
# written) divided by the bytes the program wrote: wamp_<size>, lower is
# better; and latency_<size>_ns per overwrite+fsync. The file system is
# frozen and thawed before each size so no earlier dirty data is counted
# (bench/src/wamp.c); runs as root under bench/run.sh.
case $BENCH_SCALE in smoke) mib=16 ops=20 ;; quick) mib=64 ops=200 ;; *) mib=64 ops=1000 ;; esac
dev=$(df --output=source "$BENCH_DIR" | tail -n 1)
stat=/sys/class/block/$(basename "$dev")/stat
[ -r "$stat" ] || { echo "wamp.sh: no block statistics for $dev ($stat)" >&2; exit 1; }
$RUN "$BENCH_BIN/wamp" "$BENCH_DIR" "$stat" "$mib" "$ops"
