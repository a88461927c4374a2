#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# FxMark's data workloads (DRBL, DRBM, DWOL, DWOM, DWAL; bench/src/fxmark.c)
# and DOCL (open, read 4 KiB, close: a server of small files) by threads and
# by processes, 1 and 2 workers (FXMARK_WORKERS="1 2 4 8 16"
# on a bigger machine). Total operations per second, higher is better.
case $BENCH_SCALE in smoke) secs=0.2 ;; quick) secs=1 ;; *) secs=3 ;; esac
for w in ${FXMARK_WORKERS:-1 2}; do
	for how in threads procs; do
		for k in DRBL DRBM DWOL DWOM DWAL DOCL; do
			$RUN "$BENCH_BIN/fxmark" "$BENCH_DIR" $k $w $how $secs || exit 1
		done
	done
done
