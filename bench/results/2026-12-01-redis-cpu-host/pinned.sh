#!/bin/bash
cfg=$1 c=$2 n=$3; shift 3
d=/mnt/t/rpin; rm -rf $d; mkdir -p $d
sock=/tmp/rpin.sock; rm -f $sock
pre=""; [ $cfg = posix ] && pre="env SPLITFS_ROOT=/mnt/t LD_PRELOAD=/work/main/build/libsplitfs.so $*"
taskset -c 0 $pre redis-server --port 0 --unixsocket $sock --unixsocketperm 700 --daemonize no --dir $d --logfile /tmp/rpin.log --save "" --appendonly yes --appenddirname aof --auto-aof-rewrite-percentage 0 --appendfsync everysec &
pid=$!
for i in $(seq 50); do [ "$(redis-cli -s $sock ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
perf stat -e task-clock,context-switches,page-faults -p $pid -o /tmp/rpin.perf &
pp=$!
sleep 0.2
rps=$(taskset -c 1 redis-benchmark -s $sock -t set -d 100 -r 100000000 -n $n -P 1 -c $c --csv | awk -F'"' '$2=="SET"{print $4}')
kill -INT $pp; wait $pp
redis-cli -s $sock shutdown >/dev/null 2>&1; wait $pid
echo "$cfg c=$c $rps $(awk '/task-clock/{printf "cpu_ms=%s ",$1} /context-switches/{printf "cs=%s ",$1} /page-faults/{printf "pf=%s ",$1} /seconds time elapsed/{printf "el=%s",$1}' /tmp/rpin.perf)"
