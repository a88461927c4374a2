#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Table 6: median latency of each call of a create / append+fsync / read /
# unlink sequence on fresh files (ns).
case $BENCH_SCALE in smoke) n=50 ;; quick) n=500 ;; *) n=2000 ;; esac
$RUN "$BENCH_BIN/table6" "$BENCH_DIR" "$n"
