#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# 4 KiB overwrites of clean, cached pages (64 MiB full, 16 quick), in a file
# the page cache holds in large folios and in one it holds in 4 KiB folios:
# in order after a read pass, and a quarter of the blocks at random after an
# fsync (cleanpages.c). A store into a clean page takes a write fault; the
# library unmaps ahead so that one fault makes a whole folio writable
# (src/fs/ahead.c). ns/op, lower is better, with the memcpy floor and
# faults per op.
case $BENCH_SCALE in smoke) mib=4 ;; quick) mib=16 ;; *) mib=64 ;; esac
$RUN "$BENCH_BIN/cleanpages" "$BENCH_DIR" "$mib"
