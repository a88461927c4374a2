#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# TPC-C on SQLite (the paper's §5 TPC-C experiment), scaled down: a Python
# driver (bench/tpcc/tpcc.py, Debian's python3 and its sqlite3 module) loads
# the nine tables of W warehouses into a fresh database in WAL mode and runs
# the standard mix (NewOrder 45%, Payment 43%, OrderStatus 4%, Delivery 4%,
# StockLevel 4%, fixed seed), once with synchronous=NORMAL (the WAL is synced
# only at checkpoints) and once with FULL (every commit syncs the WAL), each
# on its own database. Metrics: transactions/s (higher is better) and the
# load time in seconds (lower is better), per setting. The driver checks the
# TPC-C consistency conditions and SQLite's integrity at the end, also after
# reopening the database, and prints nothing if any fails.
# needs: file:/usr/bin/python3 py:sqlite3
set -eu -o pipefail
case $BENCH_SCALE in
smoke) args=(--warehouses 1 --customers 60 --items 1000 --transactions 300) ;;
quick) args=(--warehouses 1 --customers 100 --items 3000 --transactions 1000) ;;
*) args=(--warehouses 1 --customers 1000 --items 20000 --transactions 10000) ;;
esac
results=
for sync in NORMAL FULL; do
	results+=$($RUN /usr/bin/python3 "$BENCH_SRC/tpcc/tpcc.py" "$BENCH_DIR/tpcc-$sync.db" --sync "$sync" "${args[@]}")$'\n'
done
printf '%s' "$results"
