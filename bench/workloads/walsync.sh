#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A write-ahead log (a database's, or Redis's appendfsync always): records
# of 128 B to 16 KiB appended to an O_APPEND file, each made durable with
# fdatasync before the next, 4 KiB records with an fdatasync every 8
# (a group commit), and 4 KiB records synced each, written in order over a
# 4 MiB log written before (a WAL started again at its head, a recycled
# segment), and 4 KiB records each made durable with fsync rather than
# fdatasync; 200 / 1000 / 2000 records a row (walsync.c). µs per
# record, lower is better; the device's flush bounds every row.
case $BENCH_SCALE in smoke) n=200 ;; quick) n=1000 ;; *) n=2000 ;; esac
$RUN "$BENCH_BIN/walsync" "$BENCH_DIR" "$n"
