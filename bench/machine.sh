#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The machine a benchmark ran on, as JSON: kernel, CPU, memory, the file
# system under test and whether DAX was on, compiler and library versions,
# and what the primitives cost there (bench/src/primitives.c, when built).
dir=$1
fs=$(stat -f -c %T "$dir")
dev=$(df --output=source "$dir" | tail -n 1)
dax=$(python3 - "$dir" <<'PY'
import ctypes, os, sys
# statx(STATX_ATTR_DAX) on a fresh file: 0x00200000 in stx_attributes.
path = os.path.join(sys.argv[1], ".dax-probe")
open(path, "w").close()
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
AT_FDCWD = -100
libc.statx(AT_FDCWD, path.encode(), 0, 0xfff, buf)
attrs = int.from_bytes(buf.raw[8:16], "little")
os.unlink(path)
print("true" if attrs & 0x00200000 else "false")
PY
)
# Free page reporting (a virtio balloon with feature bit 5): the host takes
# back free blocks of 2^order pages, and the guest's first store to one
# then costs a fault in the host (and the library relinks in 256 KiB
# pieces, src/relink/copy.c). null where nothing is reported.
reporting=null
for f in /sys/bus/virtio/drivers/virtio_balloon/virtio*/features; do
	[ -r "$f" ] && [ "$(cut -c6 "$f")" = 1 ] &&
		reporting=$(cat /sys/module/page_reporting/parameters/page_reporting_order 2>/dev/null || echo null)
done
# An order above the largest the free lists hold (10) reports nothing, as
# the library decides (src/util/pagereport.h).
case $reporting in [0-9] | 10) ;; *) reporting=null ;; esac
prim=null
[ -x "${BENCH_BIN:-}/primitives" ] && prim=$("$BENCH_BIN/primitives" "$dir" 2>/dev/null | grep '^{')
cat <<JSON
{"date": "$(date -Is)", "kernel": "$(uname -r)", "cpu": "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')", "cpus": $(nproc), "mem_gib": $(awk '/MemTotal/ {printf "%.1f", $2/1048576}' /proc/meminfo), "fs": "$fs", "device": "$dev", "backing": "$(losetup -nO BACK-FILE "$dev" 2>/dev/null | sed 's/ *$//')", "dax": $dax, "gcc": "$(gcc -dumpfullversion)", "splitfs": "$(git -C "$(dirname "$0")/.." describe --always --dirty 2>/dev/null)", "loadavg": "$(cut -d' ' -f1-3 /proc/loadavg)", "page_reporting": $reporting, "primitives": ${prim:-null}}
JSON
