# SPDX-License-Identifier: Apache-2.0
# The guest side of tests/suites/powercut.sh (run by tests/lab/guest-init.sh
# as the share's job.sh, once per boot). The host writes /run/share/plan:
#   CUT=k LAST=0|1 REPO=... BUILD=... MODES="..."
#   START="mode:workload:seed ..."   (the workloads this boot starts)
#   DEV=/dev/vda|/dev/pmem0 MOPTS=... (the test file system and its mount
#   options), SANITY=/dev/vdb|/dev/vda (the raw sanity disk), LAB_DIR=...,
#   MKFS=1 (boot 0 on pmem: make the fsdax namespace and the file system),
#   REPAIR=1 (the last boot runs xfs_repair -n itself: the host cannot
#   reach a file system inside an NVDIMM namespace)
# The text below says /dev/vda and /dev/vdb: DEV and SANITY.
# Boot k:
#   1. mounts /dev/vda on /run/lab (XFS replays its log: the power cut is
#      over), runs `splitfs recover --root /run/lab/MODE` for every mode
#      (each mode has its own root, so its own .splitfs and logs), then checks
#      cut k-1's workloads (KIND=power) and its two sanity writes.
#      The last boot then unmounts the file system cleanly.
#   2. unless LAST: writes sanity.k (4 MiB, never fsynced), starts one
#      workload per mode under SplitFS in /run/lab/MODE/ck, acking to
#      /run/share/ack.k.MODE, waits for their first acknowledgements (at most
#      a few seconds), writes 4 MiB to the raw /dev/vdb without a sync,
#      writes /run/share/ready.k and sleeps until the host cuts the power.
# Results for the host: /run/share/results.k, lines
#   RECOVER mode=M rc=RC
#   RESULT cut=C mode=M wl=W seed=S recover=RC check=RC
#   SANITY cut=C fs_size=BYTES raw_lines=GOT/WANT
#                                 (the sanity file's size, -1: gone; the
#                                 raw write's lines found on /dev/vdb)
#   ERROR boot K: text            (mount or umount failure, XFS errors in dmesg)
# and per mode recover.k.M, check.C.M, run.C.M (the workload's output);
# trace.k: the kernel's trace of write-backs before cut k.
# A failing workload's directory is copied to /run/share/fail/cC.M.
set -u
S=/run/share
. $S/plan
M=/run/lab
CLI=$BUILD/splitfs
TOOL=$BUILD/crash/crashtool
SQL=$REPO/tests/crash/sqlwork.py
PY=/usr/bin/python3
SANITY_BYTES=4194304
up() { cut -d' ' -f1 /proc/uptime; }
res=$S/results.$CUT
: >"$res.tmp"
echo "boot $CUT: job starts at uptime $(up)s"
DN=${DEV#/dev/}
mkdir -p $M
if [ "${MKFS:-0}" = 1 ]; then
	# An NVDIMM's first boot: an fsdax namespace (struct pages in memory),
	# then XFS with reflink and exchange-range.
	ndctl create-namespace -f -e namespace0.0 -m fsdax -M mem >/dev/null &&
		[ -b "$DEV" ] && LAB_DIR=$LAB_DIR sh "$REPO/tests/lab/mkfs-pmem.sh" "$DEV" ||
		echo "ERROR boot $CUT: making the fsdax namespace and XFS on $DEV failed" >>"$res.tmp"
fi
# shellcheck disable=SC2086
if ! mount $MOPTS "$DEV" $M; then
	echo "ERROR boot $CUT: mount $DEV failed: $(dmesg | grep -i xfs | tail -n 3 | tr '\n' ' ')" >>"$res.tmp"
	mv "$res.tmp" "$res"
	exit 1
fi
echo "boot $CUT: mounted at $(up)s"
# Whether files there are DAX (statx STATX_ATTR_DAX), for the host to check.
: >$M/.daxprobe
attr=$(xfs_io -c "statx -r" $M/.daxprobe 2>/dev/null | sed -n 's/^stat.attributes = //p')
rm -f $M/.daxprobe
echo "MEDIA boot=$CUT dax=$(((${attr:-0} & 0x200000) != 0))" >>"$res.tmp"
dmesg | grep -E "XFS \\($DN\\).*(recover|Ending)" | tail -n 3

# --- 1. recovery, then cut CUT-1's checks ---------------------------------------
P=$((CUT - 1))
for mode in $MODES; do
	mkdir -p $M/$mode
	"$CLI" recover --root $M/$mode >$S/recover.$CUT.$mode 2>&1
	echo "RECOVER mode=$mode rc=$?" >>"$res.tmp"
done
echo "boot $CUT: recovered at $(up)s"
if [ -f $S/started.$P ]; then
	while read -r mode wl seed; do
		d=$M/$mode/c$P
		ack=$S/ack.$P.$mode
		rrc=$(sed -n "s/^RECOVER mode=$mode rc=//p" "$res.tmp")
		if [ "$wl" = sqlite ]; then
			"$PY" "$SQL" check "$d" "$ack" "$mode" power </dev/null >$S/check.$P.$mode 2>&1
		else
			"$TOOL" check "$wl" "$d" "$ack" "$mode" power </dev/null >$S/check.$P.$mode 2>&1
		fi
		crc=$?
		echo "RESULT cut=$P mode=$mode wl=$wl seed=$seed recover=$rrc check=$crc" >>"$res.tmp"
		if [ "$crc" = 0 ] && [ "$rrc" = 0 ]; then
			rm -rf "$d"
		else
			mkdir -p $S/fail && cp -a "$d" $S/fail/c$P.$mode
		fi
	done <$S/started.$P
	size=-1
	[ -e $M/sanity.$P ] && size=$(stat -c %s $M/sanity.$P)
	want=$(yes "cut $P" | head -c $SANITY_BYTES | grep -c "^cut $P\$")
	got=$(head -c $SANITY_BYTES "$SANITY" | grep -a -c "^cut $P\$")
	echo "SANITY cut=$P fs_size=$size raw_lines=$got/$want" >>"$res.tmp"
	rm -f $M/sanity.$P
fi
# The kernel's word on the file system (log recovery, the checks' reads).
dmesg | grep -iE "XFS \\($DN\\).*(corrupt|error|shut ?down|unmount and run xfs_repair)" | head -n 5 |
	sed "s/^/ERROR boot $CUT: kernel: /" >>"$res.tmp"
echo "boot $CUT: checked at $(up)s"
if [ "$LAST" = 1 ]; then
	# A clean unmount: the host then checks the file system (xfs_repair -n).
	umount $M || echo "ERROR boot $CUT: umount failed" >>"$res.tmp"
	if [ "${REPAIR:-0}" = 1 ]; then
		# xfs_repair 6.1 refuses the exchange-range bit: take it away first.
		if ! "$LAB_DIR/xfs_set_exchrange" --clear "$DEV" >/dev/null ||
			! xfs_repair -n "$DEV" >$S/xfs_repair.out 2>&1; then
			echo "ERROR boot $CUT: xfs_repair -n after the last cut: $(grep -v '^ *- \|^Phase' $S/xfs_repair.out | head -n 5 | tr '\n' ' ')" >>"$res.tmp"
		fi
	fi
	mv "$res.tmp" "$res"
	exit 0
fi
mv "$res.tmp" "$res"

# --- 2. the next cut's workloads --------------------------------------------------
# The file-system sanity file: written, never fsynced, so the cut loses it
# (or its end) unless something writes it back first; the kernel's trace of
# its write-back (and of syncfs/sync calls and write-back starts) goes to the
# share to say who.
touch $M/sanity.$CUT
# The events were enabled by early.sh (the host's, run by guest-init.sh with
# one vCPU: enabling them patches kernel code); here only their filter (data)
# changes, and the buffer is emptied of what the boot traced so far.
TR=/sys/kernel/tracing
if [ "$(cat $TR/events/xfs/xfs_map_blocks_alloc/enable 2>/dev/null)" = 1 ] &&
	echo "ino == $(stat -c %i $M/sanity.$CUT)" >$TR/events/xfs/xfs_map_blocks_alloc/filter; then
	: >$TR/trace
	cat $TR/trace_pipe >$S/trace.$CUT 2>/dev/null &
fi
yes sanity | head -c $SANITY_BYTES >>$M/sanity.$CUT
: >$S/started.$CUT.tmp
for spec in $START; do
	mode=${spec%%:*}
	rest=${spec#*:}
	wl=${rest%%:*}
	seed=${rest#*:}
	d=$M/$mode/c$CUT
	ack=$S/ack.$CUT.$mode
	rm -rf "$d"
	mkdir -p "$d"
	: >"$ack"
	if [ "$wl" = sqlite ]; then
		set -- "$PY" "$SQL" run "$d" "$ack" "$seed"
	else
		set -- "$TOOL" run "$wl" "$d" "$ack" "$seed"
	fi
	SPLITFS_MODE=$mode "$CLI" run --root $M/$mode -- "$@" >$S/run.$CUT.$mode 2>&1 &
	echo "$mode $wl $seed" >>$S/started.$CUT.tmp
done
mv $S/started.$CUT.tmp $S/started.$CUT
# Until every workload acknowledged something (at most about 5 s): a cut
# then falls in the middle of the work, not in the programs' start.
read -r u _ </proc/uptime
deadline=$((${u%.*} + 5))
while :; do
	all=1
	for spec in $START; do
		[ -s $S/ack.$CUT.${spec%%:*} ] || all=0
	done
	read -r u _ </proc/uptime
	[ $all = 1 ] || [ ${u%.*} -ge $deadline ] && break
	sleep 0.1
done
# The raw sanity write: /dev/vdb, which nothing else uses, written through
# its page cache and kept open (a last close would flush it). A disk with no
# write-out history has a background threshold of about nothing, so the
# flusher would write it back at its next wake-up (5 s): min_ratio gives it
# a share. Then only the 30 s expiry could write it back before the cut,
# which must lose it.
SN=${SANITY#/dev/}
if [ "$(cat /sys/block/$SN/size 2>/dev/null)" != 16384 ]; then
	echo "boot $CUT: $SANITY is not the 8 MiB sanity disk"
	exit 1
fi
if ! echo 30 >/sys/class/bdi/$(cat /sys/block/$SN/dev)/min_ratio; then
	echo "boot $CUT: cannot set min_ratio of $SANITY"
	exit 1
fi
exec 3<>"$SANITY"
yes "cut $CUT" | head -c $SANITY_BYTES >&3
df -k $M | tail -n 1
echo "boot $CUT: READY at $(up)s"
echo READY >$S/ready.$CUT
exec sleep 100000
