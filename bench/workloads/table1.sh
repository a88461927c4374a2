#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Table 1: software overhead of a 4 KiB operation = its median latency minus
# the 4 KiB memcpy it cannot avoid, measured in the same process: memcpy from
# a hot buffer and from a cold one (random 4 KiB blocks of a buffer several
# times the last-level cache; this machine's L3 is large). Appends go to a
# fresh file (no fsync); reads and overwrites hit random blocks of the same
# file afterwards, reopened and in the page cache. The file is larger than
# the LLC at quick/full scale so its blocks are as cold as the floor's.
# ns, lower is better. overhead_ns is the append's (the paper's Table 1).
case $BENCH_SCALE in
smoke) file=16 samples=4096 cold=256 ;;
quick) file=512 samples=32768 cold=1024 ;;
*) file=1024 samples=65536 cold=2048 ;;
esac
$RUN "$BENCH_BIN/overhead" "$BENCH_DIR" "$file" "$samples" "$cold"
