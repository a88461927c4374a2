#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The lab (tests/lab/setup.sh, which must have run): boots Debian's 6.12
# kernel under QEMU/TCG with the host's root read-only over virtio-9p (at the
# same paths: host binaries run in the guest unchanged) and LAB_SHARE
# writable at /run/share. JOB.sh is copied to the share and run as root in
# the guest (output in the share's job.log and on the console), then the
# guest powers off. QEMU is exec'd: the caller's $! is QEMU, and `kill -9`
# of it is a power cut (what the guest issued to a disk survives, its page
# cache does not).
#   usage: run-guest.sh JOB.sh
# Environment: LAB_DIR (the cache setup.sh filled), LAB_SHARE (default
# $LAB_DIR/share), QEMU_EXTRA (more QEMU arguments, e.g. a disk:
# "-drive file=DISK.img,if=virtio,format=raw,cache=writeback"), LAB_BIND
# (host paths under /tmp, /run, /var/tmp the guest must see, comma-separated),
# MEM (default 2G; 6G with PMEM), SMP (default 2), ACCEL tcg|kvm (default
# tcg), CPU.
# Persistent memory (fsdax, /dev/pmem0 in the guest):
#   PMEM=SIZE!START   volatile legacy pmem carved out of guest RAM (memmap=,
#                     e.g. 2G!4G; RAM must reach past it: MEM defaults to 6G)
#   PMEM_FILE=FILE    an emulated NVDIMM backed by FILE (made PMEM_SIZE big,
#                     default 1G, if missing): what reached it survives
#                     `kill -9` of QEMU. First use: `ndctl create-namespace
#                     -f -e namespace0.0 -m fsdax -M mem` in the guest.
# The guest boots on one vCPU (maxcpus=1; guest-init.sh brings the others
# online) with its TSC trusted (tsc=reliable): the kernel patches its own
# code with int3 breakpoints when it marks sched_clock stable (2 s into the
# boot) and when the clocksource watchdog marks a TSC unstable (seen on a
# loaded host), and QEMU's multi-threaded TCG does not always show the
# patched code to another vCPU in time ("Oops: int3" in sched_clock_cpu).
# With one vCPU during the first and no watchdog for the second, neither
# patch can race.
# Adapted from the team's lab tools (/work/shared/tools/daxlab/run-guest.sh).
set -e
H=$(cd "$(dirname "$0")" && pwd)
W=${LAB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/splitfs-lab}
SHARE=${LAB_SHARE:-$W/share}
JOB=$1
if [ ! -s "$W/vmlinux" ] || [ ! -s "$W/initramfs.cpio.gz" ]; then
	echo "run-guest: $W has no vmlinux/initramfs: run tests/lab/setup.sh" >&2
	exit 1
fi
mkdir -p "$SHARE"
cp "$JOB" "$SHARE/job.sh"
rm -f "$SHARE/job.log"
BIND=${LAB_BIND:-}
case $H in /tmp/* | /run/* | /var/tmp/*) BIND="${BIND:+$BIND,}$H" ;; esac
if [ "${ACCEL:-tcg}" = kvm ]; then
	A="-enable-kvm -cpu ${CPU:-host,-arch-capabilities}"
else
	A="-accel tcg,thread=multi -cpu ${CPU:-max}"
fi
P="-m ${MEM:-2G}"
MM=
if [ -n "${PMEM_FILE:-}" ]; then
	[ -f "$PMEM_FILE" ] || truncate -s "${PMEM_SIZE:-1G}" "$PMEM_FILE"
	P="-machine pc,nvdimm=on -m ${MEM:-4G},slots=2,maxmem=16G"
	P="$P -object memory-backend-file,id=nvmem,share=on,mem-path=$PMEM_FILE,size=$(stat -c %s "$PMEM_FILE")"
	P="$P -device nvdimm,id=nv0,memdev=nvmem"
	MM="labpmem=1"
elif [ -n "${PMEM:-}" ]; then
	P="-m ${MEM:-6G}"
	MM="memmap=$PMEM labpmem=1"
fi
# shellcheck disable=SC2086
exec qemu-system-x86_64 $A $P -smp "${SMP:-2}" -nographic -no-reboot \
	-kernel "$W/vmlinux" -initrd "$W/initramfs.cpio.gz" \
	-append "console=ttyS0 quiet loglevel=4 panic=-1 nokaslr tsc=reliable maxcpus=1 labinit=$H/guest-init.sh${BIND:+ labbind=$BIND} $MM ${LAB_APPEND:-}" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$SHARE",mount_tag=share,security_model=none,multidevs=remap \
	-nic none ${QEMU_EXTRA:-}
