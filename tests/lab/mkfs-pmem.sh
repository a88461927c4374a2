#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The lab's file system on fsdax pmem (run in the guest by dax-guest.sh,
# powercut-guest.sh and bench/lab.sh): XFS with reflink and the
# exchange-range feature bit (tests/lab/setup.sh builds xfs_set_exchrange in
# LAB_DIR), and a 2 MiB stripe unit, so extents are aligned to 2 MiB on the
# device and a DAX mapping can take one page fault per 2 MiB (the usual
# advice for fsdax).
#   usage: LAB_DIR=... mkfs-pmem.sh DEV
# Exit 1, saying which step failed, on failure.
DEV=$1
mkfs.xfs -f -q -m reflink=1 -d su=2m,sw=1 "$DEV" || { echo "mkfs.xfs $DEV failed" >&2; exit 1; }
"$LAB_DIR/xfs_set_exchrange" "$DEV" >/dev/null || { echo "xfs_set_exchrange $DEV failed" >&2; exit 1; }
