#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Figure 3: what each SplitFS technique brings, on sequential 4 KiB
# overwrites and 4 KiB appends, each without fsync and with fsync every 10
# ops, over one file (64 MiB full, 16 quick, 1 smoke). ns/op, lower is
# better. The configurations add the techniques one by one:
#   posix-nostaging  split architecture only: reads and overwrites through
#                    mappings, appends to the kernel
#   posix-copy       + staging, relinked by copy
#   posix-exchange   + relink by extent exchange (XFS_IOC_EXCHANGE_RANGE)
#   posix            the library's default (relink auto: copy up to 1 MiB)
# configs: posix-nostaging posix-copy posix-exchange
case $BENCH_SCALE in smoke) mib=1 ;; quick) mib=16 ;; *) mib=64 ;; esac
$RUN "$BENCH_BIN/fig3" "$BENCH_DIR" "$mib"
