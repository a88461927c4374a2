#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The operation log's cost (sync and strict modes): persisting one 64-byte
# entry by each way the file system offers (RWF_DSYNC write, the log's
# choice; pwrite + fdatasync; store + msync), its CRC32C, and an 8-byte
# durable write end to end (pwrite + fdatasync: under sync/strict the pwrite
# is logged and durable, the fdatasync free). ns/op, lower is better.
case $BENCH_SCALE in smoke) n=200 ;; quick) n=1000 ;; *) n=4000 ;; esac
$RUN "$BENCH_BIN/logcost" "$BENCH_DIR" "$n"
