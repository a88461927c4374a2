#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Figure 4: IO patterns on one file in 4 KiB operations (128 MiB full, 32
# quick): append, append with fsync every 10, sequential and random read,
# sequential and random overwrite. ns/op, lower is better; each line also
# carries the pattern's memcpy floor, faults and fsyncs per op (fig4.c).
# configs: posix-copy posix-exchange
case $BENCH_SCALE in smoke) mib=4 ;; quick) mib=32 ;; *) mib=128 ;; esac
$RUN "$BENCH_BIN/fig4" "$BENCH_DIR" "$mib"
