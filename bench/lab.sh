#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The benchmarks on persistent memory, in the lab's guest (bench/README.md,
# "On persistent memory"): bench/run.sh with the given options (default
# --quick --only table1,fig4,table6) on XFS dax=always on a 2 GiB emulated
# NVDIMM (an fsdax namespace; its backing file lives in /dev/shm meanwhile).
#   bench/lab.sh [bench/run.sh options]
# Results: bench/results/lab-<date-time>/ (BENCH_OUT), the guest's console
# and job log beside them. Needs root and the lab (tests/lab/setup.sh).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
[ "$(id -u)" = 0 ] || { echo "bench/lab.sh: must run as root" >&2; exit 2; }
make -s all bench-progs >/dev/null || exit 1
lab_out=$(tests/lab/setup.sh 2>&1) || { echo "bench/lab.sh: ${lab_out##*$'\n'}" >&2; exit 1; }
export LAB_DIR=${lab_out##*lab: ready in }
OUT=${BENCH_OUT:-$ROOT/bench/results/lab-$(date +%Y-%m-%d-%H%M%S)}
mkdir -p "$OUT/share"
OPTS=("$@")
[ ${#OPTS[@]} -gt 0 ] || OPTS=(--quick --only table1,fig4,table6)
cat >"$OUT/share/job.sh.in" <<JOB
M=/run/pmem
mkdir -p \$M
ndctl create-namespace -f -e namespace0.0 -m fsdax -M mem >/dev/null || { echo "bench-lab: no fsdax namespace"; exit 1; }
LAB_DIR="$LAB_DIR" sh "$ROOT/tests/lab/mkfs-pmem.sh" /dev/pmem0 && mount -o dax=always /dev/pmem0 \$M || { echo "bench-lab: no DAX file system"; exit 1; }
echo "bench-lab: \$(grep pmem0 /proc/mounts)"
cd "$ROOT" && BENCH_OUT=/run/share/results BENCH_MNT=\$M BENCH_MNT_READY=1 BENCH_BUILT=1 \
	bench/run.sh ${OPTS[*]}
umount \$M
JOB
bind=()
case $ROOT in /tmp/* | /run/* | /var/tmp/*) bind+=("$ROOT") ;; esac
T=$(mktemp -d /dev/shm/sfs-benchlab.XXXXXX) # the NVDIMM's backing file, in memory
LAB_BIND=$(IFS=,; echo "${bind[*]}") LAB_SHARE=$OUT/share PMEM_FILE=$T/pmem.img PMEM_SIZE=2G \
	tests/lab/run-guest.sh "$OUT/share/job.sh.in" >"$OUT/console" 2>&1
rm -rf "$T"
[ -f "$OUT/share/results/table.md" ] || { echo "bench/lab.sh: no results (see $OUT/console)" >&2; exit 1; }
mv "$OUT/share/results"/* "$OUT/"
{
	echo "# Emulated CPU (QEMU TCG guest), XFS dax=always on fsdax pmem"
	echo
	echo "Ratios understate SplitFS's user-space paths (bench/README.md, \"On persistent memory\")."
	echo
	cat "$OUT/table.md"
} >"$OUT/table.lab.md" && mv "$OUT/table.lab.md" "$OUT/table.md"
echo "results: $OUT/table.md"
