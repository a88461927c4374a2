#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The lab (tests/lab/setup.sh): runs as PID 1 inside the guest, chrooted into
# the host's root (read-only 9p). Loads virtio_blk and xfs, runs
# /run/share/job.sh (output to /run/share/job.log and the console), and
# powers off. Write only to /run, /tmp, /var/tmp, /dev/shm, the share
# (/run/share) or a disk the job mounts.
# Adapted from the team's lab tools (/work/shared/tools/daxlab/guest-init.sh).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
echo "guest-init: uptime $(cut -d' ' -f1 /proc/uptime)s kernel $(uname -r)"
modprobe -a virtio_blk xfs
# A job's early part (/run/share/early.sh), while one vCPU runs: what makes
# the kernel patch its own code, such as enabling trace events, is done
# here. With two vCPUs, QEMU's multi-threaded TCG does not always show the
# patched code to the other one in time ("Oops: int3", run-guest.sh).
[ -f /run/share/early.sh ] && sh /run/share/early.sh
# run-guest.sh booted one vCPU (maxcpus=1): bring the others online.
for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
	[ "$(cat "$c")" = 1 ] || echo 1 >"$c" || echo "guest-init: ${c%/online} did not come online"
done
# The initramfs's devtmpfs has no /dev/fd (bash's process substitution).
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
# Persistent memory when the host gave some (run-guest.sh PMEM, PMEM_FILE).
if grep -qw labpmem=1 /proc/cmdline; then
	modprobe -a nd_e820 nfit nd_pmem dax_pmem 2>/dev/null
	i=0
	while [ ! -b /dev/pmem0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
fi
if [ -f /run/share/job.sh ]; then
	sh /run/share/job.sh >/run/share/job.log 2>&1
	echo "guest-init: job rc=$? at uptime $(cut -d' ' -f1 /proc/uptime)s"
	cat /run/share/job.log
else
	setsid sh -c 'exec sh </dev/ttyS0 >/dev/ttyS0 2>&1'
fi
sync
echo o >/proc/sysrq-trigger
sleep 5
