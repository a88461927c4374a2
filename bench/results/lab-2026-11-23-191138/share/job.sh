M=/run/pmem
mkdir -p $M
mkfs.xfs -f -q -m reflink=1 /dev/pmem0 && "/root/.cache/splitfs-lab/xfs_set_exchrange" /dev/pmem0 >/dev/null &&
	mount -o dax=always /dev/pmem0 $M || { echo "bench-lab: no DAX file system"; exit 1; }
echo "bench-lab: $(grep pmem0 /proc/mounts)"
cd "/work/main" && BENCH_OUT=/run/share/results BENCH_MNT=$M BENCH_MNT_READY=1 BENCH_BUILT=1 	bench/run.sh --quick --reps 3 --only logcost
umount $M
