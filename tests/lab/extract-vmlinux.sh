#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The lab (tests/lab/setup.sh): takes the uncompressed ELF vmlinux out of a
# zstd-compressed bzImage (Debian 6.12), so QEMU boots it through its PVH
# entry point (the compressed kernel's decompressor is skipped).
#   usage: extract-vmlinux.sh /boot/vmlinuz-K OUT
# Adapted from the team's lab tools (/work/shared/tools/daxlab/extract-vmlinux.sh).
set -e
IN=$1
OUT=$2
off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$IN" | head -n 1 | cut -d: -f1)
[ -n "$off" ] || { echo "extract-vmlinux: no zstd payload in $IN" >&2; exit 1; }
# zstd complains about the trailing bytes after the frame: ignore that.
tail -c +$((off + 1)) "$IN" | zstd -dc 2>/dev/null >"$OUT" || true
if [ "$(head -c 4 "$OUT" | od -An -c | tr -d ' ')" != '177ELF' ]; then
	echo "extract-vmlinux: $OUT is not an ELF file" >&2
	exit 1
fi
echo "vmlinux: $OUT ($(stat -c %s "$OUT") bytes)"
