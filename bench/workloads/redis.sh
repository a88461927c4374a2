#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Redis with an append-only file (the paper's §5 Redis experiment): SET
# throughput (requests/s, higher is better) of redis-server logging every
# write to its AOF on the image, once with appendfsync always (an fdatasync
# per event loop iteration, before the replies go out) and once with everysec
# (a background fsync each second). redis-benchmark (not under $RUN) sends
# SETs of 100 B values to random keys over a unix socket, one client and then
# 8 clients, no pipelining. Only the server runs under $RUN: it is the
# process that writes the AOF.
#
# Each run also reports the server's CPU time per SET (all its threads, from
# /proc/PID/task/*/schedstat): on a small machine the clients share the CPUs
# with the server, and a server that answers sooner finds fewer requests
# waiting at each wake-up, so requests/s can fall while each SET costs the
# server less (bench/results/2026-11-29-redis-host/). The CPU row says which.
#
# Checks (any failure exits non-zero, with no result printed): the benchmark
# exits 0, the server answered no command with an error and reports no AOF
# write error, and the AOF replays: a fresh server without the library,
# started on a copy of it, holds the same number of keys with the same
# DEBUG DIGEST. For always the copy is taken while the server still runs
# (every acknowledged SET must be in the file by then); for everysec after a
# clean SHUTDOWN.
#
# The servers read no configuration file (all settings are on the command
# line), listen on no TCP port (port 0; bind 127.0.0.1 should one be
# configured) but on a socket in a private directory, never rewrite the AOF
# (no fork) and save no RDB. Client tools get an empty environment (no
# ~/.redisclirc). Every server started here is killed on the way out, and no
# step waits unbounded on a hung server.
# needs: redis-server redis-benchmark redis-cli
set -eu -o pipefail
shopt -s inherit_errexit
# SETs per redis-benchmark run, for always and for everysec.
case $BENCH_SCALE in
smoke) n_always=500 n_everysec=1000 ;;
quick) n_always=1000 n_everysec=4000 ;;
*) n_always=20000 n_everysec=100000 ;;
esac

tmp=$(mktemp -d /tmp/splitfs-bench-redis.XXXXXX)
servers=() # pids of servers started and not yet reaped
cleanup() {
	local p
	for p in "${servers[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	for p in "${servers[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

client() { timeout 600 env -i PATH=/usr/bin:/bin HOME="$tmp" "$@"; }
cli() { client redis-cli -s "$1" "${@:2}"; }
# running PID: the process exists and is not a zombie.
running() { [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# start_server SOCKET DIR LOG PREFIX ARGS...: starts redis-server (under
# PREFIX, a command prefix such as $RUN) on SOCKET with its data in DIR and
# waits until it answers PING; sets $server_pid.
start_server() {
	local sock=$1 dir=$2 log=$3 prefix=$4 i
	shift 4
	# shellcheck disable=SC2086 # the prefix is split into words on purpose
	$prefix redis-server --port 0 --bind 127.0.0.1 --protected-mode yes \
		--unixsocket "$sock" --unixsocketperm 700 --daemonize no \
		--dir "$dir" --logfile "$log" --save "" \
		--appendonly yes --appenddirname aof --auto-aof-rewrite-percentage 0 \
		--enable-debug-command local "$@" &
	server_pid=$!
	servers+=("$server_pid")
	for i in $(seq 50); do
		[ "$(cli "$sock" ping 2>/dev/null)" = PONG ] && return 0
		running "$server_pid" || { echo "redis: the server exited at start; its log:" >&2; cat "$log" >&2; return 1; }
		sleep 0.1
	done
	echo "redis: the server did not answer within 5 s" >&2
	return 1
}

# stop_server SOCKET PID: SHUTDOWN (which flushes and fsyncs the AOF), then
# reaps the server; it must exit 0 within 30 s.
stop_server() {
	local i st=0 p rest=()
	cli "$1" shutdown >/dev/null 2>&1 || true
	for i in $(seq 300); do
		running "$2" || break
		sleep 0.1
	done
	running "$2" && { echo "redis: the server did not exit after SHUTDOWN" >&2; return 1; }
	wait "$2" || st=$?
	for p in "${servers[@]}"; do [ "$p" = "$2" ] || rest+=("$p"); done
	servers=("${rest[@]}")
	[ "$st" = 0 ] || { echo "redis: the server exited with status $st" >&2; return 1; }
}

# bench SOCKET CLIENTS REQUESTS: prints the requests/s of SETs.
bench() {
	local csv rps
	csv=$(client redis-benchmark -s "$1" -t set -d 100 -r 100000000 -n "$3" -P 1 -c "$2" --csv)
	# "test","rps",...  then  "SET","12345.67",...
	rps=$(printf '%s\n' "$csv" | awk -F'"' '$2 == "SET" { print $4 }')
	[ -n "$rps" ] || { echo "redis: no SET result from redis-benchmark: $csv" >&2; return 1; }
	echo "$rps"
}

# cpu_ns PID: the CPU time so far of all the threads of PID, in ns (empty
# where the kernel keeps no schedstat).
cpu_ns() {
	local f sum=0 ns rest
	for f in /proc/"$1"/task/*/schedstat; do
		read -r ns rest <"$f" 2>/dev/null || return 0
		sum=$((sum + ns))
	done
	echo "$sum"
}

info_field() { cli "$1" info "$2" | tr -d '\r' | sed -n "s/^$3://p"; }

results=
for policy in always everysec; do
	dir=$BENCH_DIR/$policy
	mkdir -p "$dir"
	sock=$tmp/$policy.sock
	start_server "$sock" "$dir" "$tmp/$policy.log" "$RUN" --appendfsync "$policy"
	pid=$server_pid
	n=n_$policy
	for c in 1 8; do
		cpu0=$(cpu_ns "$pid")
		rps=$(bench "$sock" "$c" "${!n}")
		cpu1=$(cpu_ns "$pid")
		results+="{\"metric\":\"set_${policy}_c$c\",\"value\":$rps,\"unit\":\"req/s\",\"better\":\"higher\"}"$'\n'
		if [ -n "$cpu0" ] && [ -n "$cpu1" ]; then
			us=$(awk -v d=$((cpu1 - cpu0)) -v n="${!n}" 'BEGIN { printf "%.2f", d / n / 1000 }')
			results+="{\"metric\":\"set_${policy}_c${c}_server_cpu\",\"value\":$us,\"unit\":\"us/SET\",\"better\":\"lower\"}"$'\n'
		fi
	done
	keys=$(cli "$sock" dbsize)
	digest=$(cli "$sock" debug digest)
	errors=$(info_field "$sock" stats total_error_replies)
	aof_status=$(info_field "$sock" persistence aof_last_write_status)
	[ "$errors" = 0 ] || { echo "redis: $policy: the server answered $errors commands with an error" >&2; exit 1; }
	[ "$aof_status" = ok ] || { echo "redis: $policy: AOF write status '$aof_status'" >&2; exit 1; }
	[ "$keys" -gt 0 ] || { echo "redis: $policy: no keys after the benchmark" >&2; exit 1; }
	if [ "$policy" = always ]; then
		cp -a "$dir/aof" "$dir/replay"
		stop_server "$sock" "$pid"
	else
		stop_server "$sock" "$pid"
		cp -a "$dir/aof" "$dir/replay"
	fi
	# Replay the copy in a fresh server without the library.
	rsock=$tmp/$policy-replay.sock
	start_server "$rsock" "$dir" "$tmp/$policy-replay.log" "" --appenddirname replay --appendfsync no
	rkeys=$(cli "$rsock" dbsize)
	rdigest=$(cli "$rsock" debug digest)
	stop_server "$rsock" "$server_pid"
	if [ "$rkeys" != "$keys" ] || [ "$rdigest" != "$digest" ]; then
		echo "redis: $policy: the AOF replays to $rkeys keys (digest $rdigest), the server had $keys ($digest)" >&2
		exit 1
	fi
done
printf '%s' "$results"
