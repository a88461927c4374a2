M=/run/pmem
mkdir -p $M
ndctl create-namespace -f -e namespace0.0 -m fsdax -M mem >/dev/null || { echo "bench-lab: no fsdax namespace"; exit 1; }
LAB_DIR="/root/.cache/splitfs-lab" sh "/work/main/tests/lab/mkfs-pmem.sh" /dev/pmem0 && mount -o dax=always /dev/pmem0 $M || { echo "bench-lab: no DAX file system"; exit 1; }
echo "bench-lab: $(grep pmem0 /proc/mounts)"
cd "/work/main" && BENCH_OUT=/run/share/results BENCH_MNT=$M BENCH_MNT_READY=1 BENCH_BUILT=1 	bench/run.sh --quick --reps 3 --only table1,fig4,table6
umount $M
