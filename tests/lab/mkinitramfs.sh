#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The lab (tests/lab/setup.sh): a tiny initramfs (busybox-static and the 9p
# modules) that mounts the HOST root read-only over virtio-9p at /, tmpfs on
# /tmp /run /var/tmp /dev/shm, the writable share at /run/share (cache=none:
# a write() there has reached the host's file when it returns), and chroots
# into the script named by the kernel parameter labinit= (run-guest.sh
# passes guest-init.sh). Kernel parameter labbind=P1,P2,...: host paths
# under /tmp, /run or /var/tmp (hidden by those tmpfs) bound back read-only.
#   usage: mkinitramfs.sh [KVER] OUT
# Adapted from the team's lab tools (/work/shared/tools/daxlab/mkinitramfs.sh).
set -e
K=${1:-6.12.117+deb12-amd64}
OUT=$2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p $W/bin $W/mod $W/proc $W/sys $W/dev $W/newroot $W/hostroot
cp /bin/busybox $W/bin/busybox
# The 9p modules, and (so that the guest does not spend seconds of emulated
# CPU decompressing them) the disk and XFS modules.
for m in fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p crypto/crc32c_generic \
	arch/x86/crypto/crc32c-intel lib/libcrc32c fs/xfs/xfs drivers/block/virtio_blk; do
	xz -dc /lib/modules/$K/kernel/$m.ko.xz >$W/mod/$(basename $m).ko
done
cat >$W/init <<'EOI'
#!/bin/busybox sh
B=/bin/busybox
$B mount -t proc proc /proc
$B mount -t devtmpfs dev /dev
for m in netfs 9pnet 9pnet_virtio 9p; do $B insmod /mod/$m.ko; done
for m in crc32c_generic crc32c-intel libcrc32c xfs virtio_blk; do $B insmod /mod/$m.ko 2>/dev/null; done
$B mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288,cache=loose hostroot /newroot || exec $B sh
R=/newroot
$B mount --bind $R /hostroot
$B mount -t proc proc $R/proc
$B mount -t sysfs sys $R/sys
$B mount -t devtmpfs dev $R/dev
$B mkdir -p $R/dev/shm
$B mount -t tmpfs shm $R/dev/shm
$B mount -t tmpfs tmp $R/tmp
$B mount -t tmpfs run $R/run
$B mount -t tmpfs var $R/var/tmp
for p in $(echo "${labbind:-}" | $B tr ',' ' '); do
	$B mkdir -p $R$p && $B mount --bind /hostroot$p $R$p
done
$B mkdir -p $R/run/share
$B mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=none share $R/run/share || true
exec $B chroot $R /bin/sh "$labinit"
EOI
chmod +x $W/init
(cd $W && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$OUT"
echo "initramfs: $OUT ($(stat -c %s "$OUT") bytes)"
