#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Figure 4: IO patterns on one file in 4 KiB operations (128 MiB full, 32
# quick): append, append with fsync every 10, sequential and random read,
# sequential and random overwrite. ns/op, lower is better; each line also
# carries the pattern's memcpy floor, faults and fsyncs per op (fig4.c).
# Also under the peer library MadFS (FAST'23), when it is built (madfs:
# bench/README.md, "Configurations"). Its fsync makes no system call (it
# flushes CPU caches, durable only on DAX), so on this machine's page-cache
# XFS its append_fsync10 is not durable.
# configs: posix-copy posix-exchange madfs
case $BENCH_SCALE in smoke) mib=4 ;; quick) mib=32 ;; *) mib=128 ;; esac
$RUN "$BENCH_BIN/fig4" "$BENCH_DIR" "$mib"
