#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The lab: a QEMU/TCG guest (Debian's 6.12 kernel, the host's root read-only
# over virtio-9p) whose power is cut by SIGKILL of QEMU. This script makes it
# ready (tests/suites/powercut.sh uses it; tests/deps.sh runs it):
#   - installs the Debian packages it needs with apt-get, only those missing
#     (quiet; root only when something must be installed);
#   - extracts the kernel's vmlinux (booted through its PVH note), builds the
#     initramfs and xfs_set_exchrange into the cache directory, reusing what
#     is there and up to date.
#
#   tests/lab/setup.sh            prints "lab: ready in DIR" and exits 0
#
# Exits non-zero with a one-line reason as the last line of output when the
# lab cannot be had (a package not available, not root, a build step failed).
# Environment: LAB_DIR (cache, default $XDG_CACHE_HOME|$HOME/.cache +
# /splitfs-lab), LAB_KVER (default 6.12.117+deb12-amd64).
# Adapted from the team's lab tools (/work/shared/tools/daxlab/setup.sh).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
K=${LAB_KVER:-6.12.117+deb12-amd64}
LAB_DIR=${LAB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/splitfs-lab}
fail() { echo "lab: $*"; exit 1; }

# --- packages ------------------------------------------------------------------
pkgs=(qemu-system-x86 "linux-image-$K-unsigned" busybox-static xfsprogs zstd xz-utils cpio gzip
	gcc libc6-dev util-linux ndctl)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing=()
for p in "${pkgs[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || fail "packages missing (${missing[*]}) and not root to install them"
	command -v apt-get >/dev/null || fail "packages missing (${missing[*]}) and no apt-get"
	export DEBIAN_FRONTEND=noninteractive
	apt_get() { apt-get -qq -o DPkg::Lock::Timeout=600 "$@"; }
	# Which ones apt knows no candidate for (refresh the lists once if any).
	unavailable() {
		local p out=()
		for p in "${missing[@]}"; do
			apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [^(]' || out+=("$p")
		done
		echo "${out[*]}"
	}
	[ -z "$(unavailable)" ] || apt_get update >/dev/null 2>&1
	un=$(unavailable)
	[ -z "$un" ] || fail "package(s) not available from apt: $un"
	echo "lab: installing ${missing[*]}"
	log=$(mktemp)
	if ! apt_get install -y --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
		tail -n 5 "$log"
		rm -f "$log"
		fail "apt-get install ${missing[*]} failed"
	fi
	rm -f "$log"
	for p in "${missing[@]}"; do installed "$p" || fail "package $p did not install"; done
fi
[ -f "/boot/vmlinuz-$K" ] || fail "/boot/vmlinuz-$K missing (linux-image-$K-unsigned)"
[ -d "/lib/modules/$K" ] || fail "/lib/modules/$K missing (linux-image-$K-unsigned)"

# --- the cache: vmlinux, initramfs, xfs_set_exchrange ------------------------------
mkdir -p "$LAB_DIR" || fail "cannot create $LAB_DIR"
# stale OUT DEPS...: OUT is missing or older than one of DEPS.
stale() {
	local out=$1 d
	shift
	[ -s "$out" ] || return 0
	for d; do [ "$d" -nt "$out" ] && return 0; done
	return 1
}
if stale "$LAB_DIR/vmlinux" "/boot/vmlinuz-$K" "$HERE/extract-vmlinux.sh"; then
	"$HERE/extract-vmlinux.sh" "/boot/vmlinuz-$K" "$LAB_DIR/vmlinux.new" >/dev/null &&
		mv "$LAB_DIR/vmlinux.new" "$LAB_DIR/vmlinux" || fail "extracting the vmlinux failed"
fi
if stale "$LAB_DIR/initramfs.cpio.gz" "$HERE/mkinitramfs.sh" "/boot/vmlinuz-$K"; then
	"$HERE/mkinitramfs.sh" "$K" "$LAB_DIR/initramfs.cpio.gz.new" >/dev/null &&
		mv "$LAB_DIR/initramfs.cpio.gz.new" "$LAB_DIR/initramfs.cpio.gz" || fail "building the initramfs failed"
fi
if stale "$LAB_DIR/xfs_set_exchrange" "$HERE/xfs_set_exchrange.c"; then
	gcc -O2 -Wall -o "$LAB_DIR/xfs_set_exchrange" "$HERE/xfs_set_exchrange.c" ||
		fail "building xfs_set_exchrange failed"
fi
echo "lab: ready in $LAB_DIR"
exit 0
