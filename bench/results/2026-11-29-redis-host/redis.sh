#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Redis SET throughput with an AOF (appendfsync everysec), 8 clients, not
# pipelined, as bench/workloads/redis.sh runs it, with what the server
# spent: the server's CPU time (perf stat task-clock, all its threads) and
# its context switches over the run. Kernel and library alternate each
# round. PIPELINE=N sends N requests at a time (default 1).
# Needs perf, redis-server, redis-benchmark, redis-cli.
#   redis.sh ROOT LIB [ROUNDS [REQUESTS]]
#     ROOT  a directory on the managed file system (SPLITFS_ROOT)
#     LIB   build/libsplitfs.so
set -eu
root=$1 lib=$2 rounds=${3:-3} n=${4:-100000}
sock=$(mktemp -d /tmp/redis-study.XXXXXX)
trap 'rm -rf "$sock"' EXIT
one() { # one CONFIG: prints "CONFIG req/s server-ms context-switches"
	local dir=$root/redis-study.$1 pid
	rm -rf "$dir" && mkdir -p "$dir"
	local pre=(env)
	[ "$1" = library ] && pre=(env SPLITFS_ROOT="$root" LD_PRELOAD="$lib")
	"${pre[@]}" redis-server --port 0 --unixsocket "$sock/s" --unixsocketperm 700 \
		--daemonize no --dir "$dir" --appendonly yes --appendfsync everysec \
		--save "" --auto-aof-rewrite-percentage 0 >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 50); do [ -S "$sock/s" ] && break; sleep 0.1; done
	local rps
	rps=$(perf stat -e context-switches,task-clock -p "$pid" -o "$sock/stat" -- \
		env -i PATH=/usr/bin:/bin redis-benchmark -s "$sock/s" -t set -n "$n" -c 8 -P "${PIPELINE:-1}" \
		-d 100 -r 100000 --csv | grep -v '^"test' | cut -d, -f2 | tr -d '"')
	echo "$1 $rps $(awk '/task-clock/{ms=$1} /context-switches/{cs=$1} END{print ms, cs}' "$sock/stat")"
	env -i PATH=/usr/bin:/bin redis-cli -s "$sock/s" shutdown nosave >/dev/null 2>&1 || kill "$pid"
	wait "$pid" || true
	rm -rf "$dir" "$sock/s"
}
for _ in $(seq "$rounds"); do one kernel; one library; done
