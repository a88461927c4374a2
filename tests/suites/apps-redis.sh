#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# redis-server under SplitFS gives the kernel's results, in every
# consistency mode (tests/apps/lib.sh: how runs are made and compared):
# AOF with appendfsync always and everysec, BGREWRITEAOF, BGSAVE, a restart
# under the library; the data set checked against tests/apps/redisgen.py's
# model after a restart without the library, from the AOF and from the RDB.
# Per fsync policy and configuration, in $WORK/HOW/redis-POLICY:
#   1. redis-server on an empty dir: part 1 of tests/apps/redisgen.py through
#      redis-cli --pipe; part 2 through plain redis-cli (one command and one
#      reply at a time, the replies kept: with appendfsync always, one AOF
#      write and fdatasync per command); BGREWRITEAOF (a forked child writes
#      the new base); part 3 (pipe); SHUTDOWN (the AOF flushed and fsynced)
#   2. redis-server again on that dir (it reads the AOF): its data set must
#      be the model's after parts 1-3; part 4 (plain); BGSAVE (a forked child
#      writes dump.rdb); part 5 (pipe); SHUTDOWN
#   3. without the library: redis-check-aof and redis-check-rdb; the AOF
#      manifest and increment files (no timestamps in them) byte-identical
#      with the kernel run's; redis-server with the AOF (the data set must be
#      the model's after parts 1-5) and with the RDB only (--appendonly no:
#      after parts 1-4); DEBUG DIGEST of both equal to the kernel run's.
# Parts 1-2 and 4 go through the library's write path; after a fork the
# AOF descriptor is the child's too, so SplitFS leaves it to the kernel
# (README: fork), which parts 3 and 5 check.
# Steps 1 and 2 run under SplitFS in mode HOW, or natively (kernel). The
# servers listen only on a unix socket in $T/redis (--port 0), live at most
# SFS_APPS_CMD_TIMEOUT seconds each and are ended at exit whatever happens.
# Knob: SFS_APPS_REDIS_SCALE (the fraction of the Redis workload run,
# default 1, the kernel run alike); tests/apps/lib.sh has the others.
# Tests (tests/run.sh apps-redis TEST...): always, everysec (the policy).
. "$(dirname "$0")/../apps/lib.sh"
sfs_tests always everysec
RPID= # the redis-server being run (its timeout wrapper), ended at exit
apps_cleanup() { [ -z "$RPID" ] || redis_kill; }
cur=redis
mkdir -p "$T/redis"
RS=$T/redis/server.sock
# redis_up HOW DIR ARGS...: redis-server on DIR under SplitFS in mode HOW
# (natively for kernel and native), waits until it answers PING.
redis_up() {
	local how=$1 dir=$2 i
	shift 2
	rm -f "$RS"
	local args=(--port 0 --unixsocket "$RS" --unixsocketperm 700 --dir "$dir" --daemonize no
		--pidfile "$T/redis/server.pid" --logfile "" --save "" --enable-debug-command yes "$@")
	local limit=(timeout -k 5 "${SFS_APPS_CMD_TIMEOUT:-120}")
	echo "=== redis-server ${args[*]} ($how)" >>"$T/redis/server.log"
	if [ "$how" = kernel ] || [ "$how" = native ] || [ "${SFS_APPS_NATIVE:-0}" = 1 ]; then
		"${limit[@]}" redis-server "${args[@]}" >>"$T/redis/server.log" 2>&1 &
		RPID=$!
	else
		SPLITFS_MODE=$how SPLITFS_STATS=1 SPLITFS_STATS_FILE=$T/stats.$cur.$how "${limit[@]}" \
			"$SFS_CLI" run --root "$SFS_MNT" -- redis-server "${args[@]}" >>"$T/redis/server.log" 2>"$T/redis/raw.err" &
		RPID=$!
	fi
	for ((i = 0; i < 600; i++)); do
		[ -S "$RS" ] && [ "$(redis-cli -s "$RS" PING 2>/dev/null)" = PONG ] && return 0
		kill -0 $RPID 2>/dev/null || break
		sleep 0.05
	done
	echo "redis-server ($how) on $dir $*: no answer; log: $(tail -n 3 "$T/redis/server.log" | tr '\n' ' ')" | cut -c 1-400 >"$T/step"
	redis_kill
	return 1
}
# redis_kill: ends the server (and its timeout wrapper), by their ids.
redis_kill() {
	local p
	p=$(cat "$T/redis/server.pid" 2>/dev/null)
	[ -n "$p" ] && [ "$(cat /proc/$p/comm 2>/dev/null)" = redis-server ] || p=
	[ -n "$RPID" ] && kill -TERM $RPID 2>/dev/null
	[ -n "$p" ] && kill -TERM $p 2>/dev/null
	sleep 0.5
	[ -n "$RPID" ] && kill -KILL $RPID 2>/dev/null
	[ -n "$p" ] && kill -KILL $p 2>/dev/null
	[ -n "$RPID" ] && wait $RPID 2>/dev/null
	rm -f "$T/redis/server.pid"
	RPID=
}
# redis_down HOW [ARGS]: SHUTDOWN [ARGS]; the server must exit 0.
redis_down() {
	local how=$1 r out
	shift
	out=$(timeout 60 redis-cli -s "$RS" SHUTDOWN "$@" 2>&1)
	if echo "$out" | grep -q '^\(ERR\|(error)\)'; then
		echo "redis-cli SHUTDOWN $*: $out" | head -n 1 >"$T/step"
		redis_kill
		return 1
	fi
	wait $RPID
	r=$?
	RPID=
	[ "$how" = kernel ] || [ "$how" = native ] || [ "${SFS_APPS_NATIVE:-0}" = 1 ] ||
		stats_split "$T/redis/raw.err" "$T/stats.$cur.$how" 2>>"$T/redis/server.log"
	[ $r = 0 ] && return 0
	echo "redis-server ($how) exit $r$([ $r = 124 ] && echo ", timed out"); log: $(tail -n 3 "$T/redis/server.log" | tr '\n' ' ')" | cut -c 1-400 >"$T/step"
	return 1
}
# redis_load PART OUT: part PART of the workload, its replies (or
# redis-cli --pipe's summary) to OUT; no command may fail (redis-cli exits 0
# on most errors: its output tells).
rerr='ERR\|WRONGTYPE\|(error)\|Error\|Could not connect'
redis_load() {
	local part=$1 out=$2 pipe=
	[ $((part % 2)) = 1 ] && pipe=--pipe
	$PY "$APPS/redisgen.py" cmds "$part" "$RSCALE" | timeout 120 redis-cli -s "$RS" $pipe >"$out" 2>&1
	if [ $? != 0 ] || grep -q "^\\($rerr\\)" "$out" || { [ -n "$pipe" ] && ! grep -q '^errors: 0, replies: ' "$out"; }; then
		echo "redis-cli $pipe (part $part): $(grep -m 1 "^\\($rerr\\|errors\\)" "$out" || tail -n 1 "$out")" | cut -c 1-400 >"$T/step"
		return 1
	fi
}
# redis_bg CMD FIELD STATUS: CMD (BGREWRITEAOF, BGSAVE) and wait until INFO
# persistence shows FIELD:0 and no rewrite scheduled; STATUS must be ok.
redis_bg() {
	local i info out
	out=$(redis-cli -s "$RS" "$1" 2>&1)
	case $out in Background*) ;; *) echo "redis-cli $1: $out" >"$T/step"; return 1 ;; esac
	for ((i = 0; i < 2400; i++)); do
		info=$(redis-cli -s "$RS" INFO persistence 2>&1 | tr -d '\r')
		echo "$info" | grep -q "^$2:0" && echo "$info" | grep -q '^aof_rewrite_scheduled:0' && break
		kill -0 $RPID 2>/dev/null || break
		sleep 0.05
	done
	echo "$info" | grep -q "^$3:ok" && return 0
	echo "redis-cli $1: $(echo "$info" | grep "^\($2\|$3\):\|$rerr" | tr '\n' ' ')" | cut -c 1-400 >"$T/step"
	return 1
}
# redis_read DIR NAME ARGS...: natively, redis-server on DIR with ARGS; its
# data set to $T/NAME.dump, its DEBUG DIGEST to $T/NAME.digest.
redis_read() {
	local dir=$1 name=$2
	shift 2
	rm -f "$T/$name.dump" "$T/$name.digest"
	redis_up native "$dir" "$@" || { echo "$(cat "$T/step")" >"$T/$name.dump"; rm -f "$T/step"; return 1; }
	$PY "$APPS/redisdump.py" "$RS" >"$T/$name.dump" 2>&1
	redis-cli -s "$RS" DEBUG DIGEST >"$T/$name.digest" 2>&1
	redis_down native NOSAVE || rm -f "$T/step"
}
# SFS_APPS_REDIS_SCALE (default 1): the fraction of redisgen.py's commands
# each part has (kernel and SplitFS runs alike).
RSCALE=${SFS_APPS_REDIS_SCALE:-1}
if have redis-server redis-cli redis-check-aof redis-check-rdb; then
	for p in 3 4 5; do $PY "$APPS/redisgen.py" expect $p "$RSCALE" >"$T/redis-expect-$p" || die "redisgen.py expect $p"; done
	for pol in always everysec; do
		wanted $pol || continue
		for how in kernel $MODES; do
			clock
			D=$WORK/$how/redis-$pol
			N=redis-$pol.$how
			mkdir -p "$D"
			{
				redis_up $how "$D" --appendonly yes --appendfsync $pol &&
					redis_load 1 "$T/$N.p1" &&
					redis_load 2 "$T/$N.p2" &&
					redis_bg BGREWRITEAOF aof_rewrite_in_progress aof_last_bgrewrite_status &&
					redis_load 3 "$T/$N.p3" &&
					redis_down $how &&
					redis_up $how "$D" --appendonly yes --appendfsync $pol &&
					{ $PY "$APPS/redisdump.py" "$RS" >"$T/$N.mid.dump" || ! echo "redisdump.py after the restart failed" >"$T/step"; } &&
					redis_load 4 "$T/$N.p4" &&
					redis_bg BGSAVE rdb_bgsave_in_progress rdb_last_bgsave_status &&
					redis_load 5 "$T/$N.p5" &&
					redis_down $how
			} 2>"$T/redis-$pol.$how.err"
			r=$?
			[ -n "$RPID" ] && redis_kill
			status redis-$pol $how $r
			spent $cur $how
			# Read back without the library.
			if o=$(redis-check-aof "$D/appendonlydir/appendonly.aof.manifest" 2>&1) &&
				echo "$o" | grep -q 'All AOF files and manifest are valid'; then
				ok "redis-$pol redis-check-aof ($how)"
			else
				bad "redis-$pol redis-check-aof ($how)" "$(echo "$o" | grep -v '^\(\[offset\|Start\)' | tail -n 3 | tr '\n' ';')"
			fi
			if o=$(redis-check-rdb "$D/dump.rdb" 2>&1) && echo "$o" | grep -q 'RDB looks OK'; then
				ok "redis-$pol redis-check-rdb ($how)"
			else
				bad "redis-$pol redis-check-rdb ($how)" "$(ls "$D/dump.rdb" 2>&1 >/dev/null | sed 's/$/; /')$(echo "$o" | tail -n 3 | tr '\n' ';')"
			fi
			ls "$D/appendonlydir" >"$T/$N.aofdir" 2>&1
			redis_read "$D" $N.aof --appendonly yes --aof-load-truncated no
			redis_read "$D" $N.rdb --appendonly no
			# Against the model: the kernel run checks the model, the others SplitFS.
			same_file "redis-$pol data set after the restart in step 2 ($how)" "$T/redis-expect-3" "$T/$N.mid.dump"
			same_file "redis-$pol data set loaded from the AOF ($how)" "$T/redis-expect-5" "$T/$N.aof.dump"
			same_file "redis-$pol data set loaded from the RDB ($how)" "$T/redis-expect-4" "$T/$N.rdb.dump"
		done
		K=redis-$pol.kernel
		for m in $MODES; do
			N=redis-$pol.$m
			cat "$T/$K".p[135] >"$T/$K.pipe" 2>/dev/null
			cat "$T/$N".p[135] >"$T/$N.pipe" 2>/dev/null
			same_file "redis-$pol redis-cli --pipe summaries ($m)" "$T/$K.pipe" "$T/$N.pipe"
			same_file "redis-$pol replies of part 2 ($m)" "$T/$K.p2" "$T/$N.p2"
			same_file "redis-$pol replies of part 4 ($m)" "$T/$K.p4" "$T/$N.p4"
			same_file "redis-$pol appendonlydir file names ($m)" "$T/$K.aofdir" "$T/$N.aofdir"
			for f in $(grep -v '\.rdb$' "$T/$K.aofdir"); do # the manifest and the increments
				same_file "redis-$pol $f ($m)" "$WORK/kernel/redis-$pol/appendonlydir/$f" "$WORK/$m/redis-$pol/appendonlydir/$f"
			done
			same_file "redis-$pol DEBUG DIGEST from the AOF ($m)" "$T/$K.aof.digest" "$T/$N.aof.digest"
			same_file "redis-$pol DEBUG DIGEST from the RDB ($m)" "$T/$K.rdb.digest" "$T/$N.rdb.digest"
		done
	done
	for m in $MODES; do served redis $m; done
fi
apps_end
