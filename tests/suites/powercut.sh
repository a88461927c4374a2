#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Crash consistency, power cuts (the process-kill points are suites/crash.sh).
#
# The lab (tests/lab/): a QEMU/TCG guest that sees the host's root read-only,
# so build/ and tests/ run in it unchanged, with a page-cache XFS (reflink,
# exchange-range) on a virtio disk image (cache=writeback) and a 9p share
# mounted without cache (an acknowledgement written there has reached the
# host when write() returns). The power cut is `kill -9` of QEMU: what the
# guest issued to the disk stays in the image, its page cache is lost.
#
# One boot per cut (tests/lab/powercut-guest.sh is the guest side). Boot k
# mounts the disk (XFS replays its log), runs `splitfs recover` for each
# mode's root, checks cut k-1's workloads with KIND=power, then starts cut
# k's: one workload per mode of $MODES at once, each in its own directory,
# acking to its own file on the share, and says READY. The host waits for
# READY, sleeps 0.5-4 s at random, and kills QEMU. The last boot only checks.
# Workloads rotate across cuts: append, overwrite, mixed, sqlite, nosync, truncate,
# threads, overthreads
# (tests/crash/). After the last cut the host runs xfs_repair -n on the image.
#
# The harness checks itself: just before READY every boot writes 4 MiB to a
# second, raw disk (/dev/vdb, nothing else uses it) through the page cache
# without a sync; each cut must lose it (whole or in part), so a harness that
# does not really cut power fails. It also writes a file on the test file
# system that it never fsyncs; that one is lost too unless something writes
# it back before the cut (counted, and a note names who from the guest's
# trace; not a failure: writing back more than asked is never wrong).
#
# Prints per mode: cuts, cuts with acknowledged work, violations, recovery
# failures, recovery time. Any violation, recovery failure, workload error,
# boot failure or xfs_repair complaint fails the suite; the evidence (acks,
# checker, recovery and workload output, job logs, consoles, the failing
# directories) stays in ${SFS_TEST_OUT:-tests/output}/powercut/share/, with
# the summary in summary.txt beside it. Skips (exit 77) when the lab cannot be
# set up (tests/lab/setup.sh says why).
#
# Knobs: POWERCUT_CUTS (cuts per mode, default 6: each workload once per
# mode; hundreds for a long run, with SFS_TEST_TIMEOUT raised: a cut takes
# about 20-30 s here),
# POWERCUT_SEED (first workload seed, default 1), POWERCUT_BOOT_TIMEOUT
# (seconds a boot may take to READY or to power off, default 240),
# POWERCUT_BOOT_RETRIES (how many times a run boots a guest again whose
# kernel stopped before it reached guest-init.sh, default 2),
# POWERCUT_DELAY_MS="MIN MAX" (default "500 4000"), POWERCUT_KEEP=1 (keep
# the share with acks and logs after a passing run too), LAB_DIR (lab cache),
# POWERCUT_MEDIA=disk|pmem (default disk), POWERCUT_WORKLOADS (the
# rotation, default "append overwrite mixed sqlite nosync truncate threads overthreads":
# with 6 cuts a mode, threads runs in sync and strict, overthreads in strict).
#
# POWERCUT_MEDIA=pmem (suites/powercut-pmem.sh): the test file system is XFS
# on fsdax persistent memory, mounted dax=always: an emulated NVDIMM backed
# by a host file (what the guest stored reaches the file at once and survives
# the kill; boot 0 makes the namespace and the file system, the last boot
# runs xfs_repair -n). SplitFS takes its DAX paths there (the log stored
# through a MAP_SYNC mapping with cache-line flushes and a fence). TCG has
# no CPU cache, so a missing flush cannot show up as lost data: these cuts
# check the ordering and the recovery, not the flushes.
. "$(dirname "$0")/../lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
LAB=$REPO/tests/lab
CUTS=${POWERCUT_CUTS:-6}
SEED=${POWERCUT_SEED:-1}
BOOT_TIMEOUT=${POWERCUT_BOOT_TIMEOUT:-240}
BOOT_RETRIES=${POWERCUT_BOOT_RETRIES:-2}
read -r DMIN DMAX <<<"${POWERCUT_DELAY_MS:-500 4000}"
WORKLOADS=(${POWERCUT_WORKLOADS:-append overwrite mixed sqlite nosync truncate threads overthreads})
MEDIA=${POWERCUT_MEDIA:-disk}
case $MEDIA in disk | pmem) ;; *) die "POWERCUT_MEDIA must be disk or pmem" ;; esac
OUTD=${SFS_TEST_OUT:-$REPO/tests/output}/powercut$([ "$MEDIA" = pmem ] && echo -pmem)
SANITY_BYTES=4194304
rmdir "$WORK" 2>/dev/null # the host's test image is not used
[ -x "$SFS_BUILD/crash/crashtool" ] || die "$SFS_BUILD/crash/crashtool not built (make tests)"
[ -x "$SFS_CLI" ] || die "$SFS_CLI not built (make)"

. "$LAB/suite-env.sh" # LAB_DIR, LAB_BIND, or a skip

# --- the disk, the share, the guest ------------------------------------------------
T=$(mktemp -d "${TMPDIR:-/tmp}/sfs-powercut.XXXXXX")
IMG=$T/disk.img
SH=$OUTD/share
rm -rf "$OUTD"
mkdir -p "$SH"
QPID=
# stop_guest: QEMU killed (the power cut) and reaped.
stop_guest() {
	kill -9 "$QPID" 2>/dev/null
	wait "$QPID" 2>/dev/null
	QPID=
}
cleanup() {
	[ -z "$QPID" ] || stop_guest
	rm -rf "$T"
}
trap cleanup EXIT
trap 'echo "powercut: interrupted"; exit 143' TERM INT HUP
truncate -s 8M "$T/sanity.img" # the raw sanity write's disk
SANITY_DRIVE="-drive file=$T/sanity.img,if=virtio,format=raw,cache=writeback"
if [ "$MEDIA" = pmem ]; then
	export PMEM_FILE=$T/pmem.img PMEM_SIZE=1G
	GUEST="DEV=/dev/pmem0 MOPTS='-o dax=always' SANITY=/dev/vda REPAIR=1"
	export QEMU_EXTRA="$SANITY_DRIVE"
else
	truncate -s 512M "$IMG"
	mkfs.xfs -q -f -m reflink=1 "$IMG" || die "mkfs.xfs failed"
	"$LAB_DIR/xfs_set_exchrange" "$IMG" >/dev/null || die "xfs_set_exchrange failed"
	GUEST="DEV=/dev/vda MOPTS= SANITY=/dev/vdb REPAIR=0"
	export QEMU_EXTRA="-drive file=$IMG,if=virtio,format=raw,cache=writeback $SANITY_DRIVE"
fi
export LAB_SHARE=$SH
# The trace events the guest uses (powercut-guest.sh), enabled while one vCPU
# runs (guest-init.sh), with a filter on the sanity file that matches
# nothing until the job sets its inode.
cat >"$SH/early.sh" <<'EOF'
TR=/sys/kernel/tracing
{ [ -e $TR/trace_pipe ] || mount -t tracefs nodev $TR; } 2>/dev/null || exit 0
echo "ino == 0" >$TR/events/xfs/xfs_map_blocks_alloc/filter 2>/dev/null || exit 0
for e in xfs/xfs_map_blocks_alloc syscalls/sys_enter_syncfs syscalls/sys_enter_sync \
	writeback/writeback_queue writeback/writeback_start; do
	echo 1 >$TR/events/$e/enable
done 2>/dev/null
exit 0
EOF
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# boot_failed K WHY: boot K failed: stops the guest and returns 2 if it
# never reached guest-init.sh (as boot does), else prints WHY and returns 1.
boot_failed() {
	stop_guest
	lab_guest_started "$SH/console.$1" || return 2
	echo "FAIL $2"
	return 1
}

# boot K LAST: boots the guest for boot K; unless LAST, cuts its power
# once it is READY. Returns 1 (after printing why) if the boot failed, 2 if
# the guest stopped or hung before it reached guest-init.sh (its kernel
# crashed while booting: nothing of ours ran, no disk was touched).
boot() {
	local k=$1 last=$2 start="" mi=0 mode wl
	for mode in $MODES; do
		wl=${WORKLOADS[(k + mi) % ${#WORKLOADS[@]}]}
		start="$start $mode:$wl:$((SEED + 10 * k + mi))"
		mi=$((mi + 1))
	done
	[ "$last" = 1 ] && start=""
	cat >"$SH/plan" <<-EOF
		CUT=$k
		LAST=$last
		REPO='$REPO'
		BUILD='$SFS_BUILD'
		MODES='$MODES'
		START='$start'
		LAB_DIR='$LAB_DIR'
		MKFS=$([ "$MEDIA" = pmem ] && [ "$k" = 0 ] && echo 1 || echo 0)
		$GUEST
	EOF
	local t0 t1 delay
	t0=$(now_ms)
	boots=$((boots + 1))
	setpriv --pdeathsig KILL -- "$LAB/run-guest.sh" "$LAB/powercut-guest.sh" </dev/null \
		>"$SH/console.$k" 2>&1 &
	QPID=$!
	if [ "$last" = 1 ]; then
		while kill -0 "$QPID" 2>/dev/null; do
			if [ $(($(now_ms) - t0)) -gt $((BOOT_TIMEOUT * 1000)) ]; then
				boot_failed "$k" "boot $k (the last): no power-off after ${BOOT_TIMEOUT}s"
				return
			fi
			sleep 0.2
		done
		wait "$QPID"
		QPID=
		lab_guest_started "$SH/console.$k" || return 2
		cp "$SH/job.log" "$SH/job.$k.log" 2>/dev/null
		printf 'boot %d: checked and powered off after %.1f s\n' "$k" "$(echo "($(now_ms) - $t0) / 1000" | bc -l)"
		return 0
	fi
	until [ -e "$SH/ready.$k" ]; do
		if ! kill -0 "$QPID" 2>/dev/null; then
			boot_failed "$k" "boot $k: the guest stopped before READY"
			return
		fi
		if [ $(($(now_ms) - t0)) -gt $((BOOT_TIMEOUT * 1000)) ]; then
			boot_failed "$k" "boot $k: no READY after ${BOOT_TIMEOUT}s"
			return
		fi
		sleep 0.1
	done
	t1=$(now_ms)
	delay=$((DMIN + RANDOM % (DMAX - DMIN + 1)))
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	if ! kill -0 "$QPID" 2>/dev/null; then
		echo "FAIL boot $k: the guest powered off by itself before the cut"
		return 1
	fi
	stop_guest # the power cut
	cp "$SH/job.log" "$SH/job.$k.log" 2>/dev/null
	echo "$delay" >"$SH/delay.$k"
	printf 'boot %d: READY after %.1f s, power cut %d ms later (%s)\n' "$k" \
		"$(echo "($t1 - $t0) / 1000" | bc -l)" "$delay" "${start# }"
}

# who_wrote C: what the guest's trace of cut C says wrote data back before
# the cut (write-back starts other than the periodic ones, syncfs, sync, the
# sanity file's write-back), one "task (event ...)" each.
who_wrote() {
	awk '!/reason=periodic/ {
		c = $1; sub(/-[0-9]+$/, "", c); ev = ""
		for (i = 2; i <= NF; i++)
			if ($i ~ /^(xfs_map_blocks_alloc|sys_syncfs|sys_sync|writeback_queue|writeback_start)/) {
				ev = $i; sub(/[:(].*$/, "", ev); break
			}
		x = ""
		if (match($0, /bdi [^ ]+/)) x = " " substr($0, RSTART, RLENGTH - 1)
		if (match($0, /reason=[a-z_]+/)) x = x " " substr($0, RSTART, RLENGTH)
		if (ev != "") print c " (" ev x ")"
	}' "$SH/trace.$1" 2>/dev/null | sort -u | tr '\n' ' '
}

# --- the cuts ------------------------------------------------------------------------
declare -A cuts acked viol recfail records rec_n rec_sum rec_max perwl
for mode in $MODES; do
	cuts[$mode]=0 acked[$mode]=0 viol[$mode]=0 recfail[$mode]=0 records[$mode]=0
	rec_n[$mode]=0 rec_sum[$mode]=0 rec_max[$mode]=0 perwl[$mode]=""
done
fails=0 sane=0 fs_lost=0 boots=0 reboots=0 t_all=$(now_ms)
for ((k = 0; k <= CUTS; k++)); do
	last=$([ $k -eq "$CUTS" ] && echo 1 || echo 0)
	boot $k "$last"
	brc=$?
	# A guest kernel that crashed before our code ran gets booted again, at
	# most BOOT_RETRIES times a run (each one is a note, with the crash).
	while [ $brc = 2 ] && [ $reboots -lt "$BOOT_RETRIES" ]; do
		reboots=$((reboots + 1))
		mv "$SH/console.$k" "$SH/console.$k.crashed$reboots"
		echo "note: boot $k: the guest's kernel stopped before guest-init.sh (nothing of ours ran, no disk touched): booting it again"
		lab_console_excerpt "$SH/console.$k.crashed$reboots"
		boot $k "$last"
		brc=$?
	done
	if [ $brc != 0 ]; then
		[ $brc = 2 ] && echo "FAIL boot $k: the guest's kernel stopped before guest-init.sh ($reboots boots again already)"
		fails=$((fails + 1))
		grep -h '^ERROR' "$SH/results.$k" 2>/dev/null | sed 's/^/    /'
		sed 's/^/    | /' "$SH/job.log" 2>/dev/null | tail -n 15
		lab_console_excerpt "$SH/console.$k"
		break
	fi
	[ $k -gt 0 ] || continue
	# Boot k's report on cut k-1.
	c=$((k - 1))
	r=$SH/results.$k
	if [ ! -f "$r" ]; then
		echo "FAIL boot $k: no results (the guest's job failed)"
		sed 's/^/    | /' "$SH/job.$k.log" 2>/dev/null | tail -n 15
		fails=$((fails + 1))
		break
	fi
	want_dax=$([ "$MEDIA" = pmem ] && echo 1 || echo 0)
	if ! grep -q "^MEDIA boot=$k dax=$want_dax\$" "$r"; then
		echo "FAIL boot $k: files on the test file system are$([ "$want_dax" = 1 ] && echo " not") DAX ($(grep '^MEDIA' "$r"))"
		fails=$((fails + 1))
	fi
	if grep -q '^ERROR' "$r"; then
		grep '^ERROR' "$r" | sed "s/^ERROR /FAIL /"
		fails=$((fails + 1))
	fi
	while read -r _ cut mode wl seed rrc crc; do
		cut=${cut#cut=} mode=${mode#mode=} wl=${wl#wl=} seed=${seed#seed=}
		rrc=${rrc#recover=} crc=${crc#check=}
		cuts[$mode]=$((cuts[$mode] + 1))
		perwl[$mode]="${perwl[$mode]} $wl"
		ack=$SH/ack.$cut.$mode
		# (the threads workload prefixes each line with its thread, "T2:W 7")
		grep -qE '^(T[0-9]+:)?(W|S|C|A|I)( |$)' "$ack" 2>/dev/null &&
			acked[$mode]=$((acked[$mode] + 1))
		rec=$SH/recover.$k.$mode
		# "... N records replayed ... X ms"
		read -r n ms < <(sed -nE 's/.* ([0-9]+) records replayed.* ([0-9.]+) ms$/\1 \2/p' "$rec")
		if [ -n "${ms:-}" ]; then
			records[$mode]=$((records[$mode] + n))
			rec_n[$mode]=$((rec_n[$mode] + 1))
			rec_sum[$mode]=$(echo "${rec_sum[$mode]} + $ms" | bc)
			rec_max[$mode]=$(echo "if ($ms > ${rec_max[$mode]}) $ms else ${rec_max[$mode]}" | bc)
		fi
		repro="mode $mode, workload $wl, seed $seed, cut $cut, $(cat "$SH/delay.$cut") ms after READY"
		if [ "$rrc" != 0 ]; then
			recfail[$mode]=$((recfail[$mode] + 1))
			echo "FAIL $mode cut $cut: splitfs recover failed (exit $rrc; $repro):"
			sed 's/^/    /' "$rec" | head -n 10
		fi
		if [ "$crc" != 0 ]; then
			viol[$mode]=$((viol[$mode] + 1))
			echo "FAIL $mode cut $cut: $wl check (KIND=power) exit $crc ($repro):"
			sed 's/^/    /' "$SH/check.$cut.$mode" | head -n 20
		fi
		if [ -s "$SH/run.$cut.$mode" ]; then
			viol[$mode]=$((viol[$mode] + 1))
			echo "FAIL $mode cut $cut: the workload reported errors ($repro):"
			sed 's/^/    /' "$SH/run.$cut.$mode" | head -n 10
		fi
	done < <(grep '^RESULT' "$r")
	# The raw write of cut c must be lost (whole or in part): else the
	# power was not cut. The never-fsynced file on the test file system is
	# lost too unless something wrote it back first (then the guest's trace
	# of its write-back says who; not a failure).
	read -r fs_size raw < <(sed -nE 's/^SANITY cut=[0-9]+ fs_size=(-?[0-9]+) raw_lines=([0-9]+\/[0-9]+)$/\1 \2/p' "$r")
	if [ -z "${raw:-}" ] || [ "${raw%/*}" -ge "${raw#*/}" ]; then
		echo "FAIL cut $c: the raw write without sync survived whole (lines ${raw:-no report}):" \
			"the power was not cut (trace: $(who_wrote "$c"))"
		fails=$((fails + 1))
	else
		sane=$((sane + 1))
	fi
	if [ -n "${fs_size:-}" ] && [ "$fs_size" -lt $SANITY_BYTES ]; then
		fs_lost=$((fs_lost + 1))
	elif [ "$MEDIA" = pmem ]; then
		: # DAX: write() stores straight into pmem, there is no page cache to lose
	else
		by=$(who_wrote "$c")
		echo "note: cut $c: the never-fsynced file on the test file system was written back before the cut (${fs_size:-?} bytes; by: ${by:-unknown})"
	fi
done
t_all=$(($(now_ms) - t_all))
# The last boot unmounted the file system cleanly: it must also be consistent.
# (xfs_repair 6.1 refuses the exchange-range bit: take it away first.)
# On pmem the last boot ran it (an ERROR line of its results, counted above).
if [ "$MEDIA" = disk ] && [ "$k" -gt "$CUTS" ] && ! grep -q '^ERROR' "$SH/results.$CUTS" 2>/dev/null; then
	if ! "$LAB_DIR/xfs_set_exchrange" --clear "$IMG" >/dev/null ||
		! xfs_repair -n "$IMG" >"$SH/xfs_repair.out" 2>&1; then
		echo "FAIL: xfs_repair -n after the last cut:"
		grep -v '^ *- \|^Phase' "$SH/xfs_repair.out" | head -n 15 | sed 's/^/    /'
		fails=$((fails + 1))
	fi
fi

# --- the summary ---------------------------------------------------------------------
sum=$OUTD/summary.txt
: >"$sum"
for mode in $MODES; do
	avg=$([ "${rec_n[$mode]}" -gt 0 ] && echo "scale=2; ${rec_sum[$mode]} / ${rec_n[$mode]}" | bc || echo 0)
	dist=$(tr ' ' '\n' <<<"${perwl[$mode]}" | sed '/^$/d' | sort | uniq -c | awk '{printf " %s=%s", $2, $1}')
	printf '%-6s %d power cuts (%d with acknowledged work;%s): %d violations, %d recovery failures; recovery: %d records replayed, %.2f ms mean, %.2f ms max\n' \
		"$mode" "${cuts[$mode]}" "${acked[$mode]}" "$dist" "${viol[$mode]}" "${recfail[$mode]}" \
		"${records[$mode]}" "$avg" "${rec_max[$mode]}" >>"$sum"
	fails=$((fails + viol[$mode] + recfail[$mode]))
	if [ "${cuts[$mode]}" -ne "$CUTS" ]; then
		echo "FAIL $mode: ${cuts[$mode]} of $CUTS cuts checked" >>"$sum"
		fails=$((fails + 1))
	fi
done
printf 'sanity: %d of %d cuts lost the raw write without sync, %d the never-fsynced file%s; %d boots in %.1f s%s\n' \
	"$sane" "$CUTS" "$fs_lost" "$([ "$MEDIA" = pmem ] && echo " (on DAX, write() has no page cache to lose)")" "$boots" \
	"$(echo "$t_all / 1000" | bc -l)" "$([ $reboots -gt 0 ] && echo " ($reboots again after the guest's kernel stopped while booting)")" >>"$sum"
cat "$sum"
if [ $fails -ne 0 ]; then
	echo "FAIL: evidence kept in $OUTD"
	exit 1
fi
[ "${POWERCUT_KEEP:-0}" = 1 ] || rm -rf "$SH"
exit 0
