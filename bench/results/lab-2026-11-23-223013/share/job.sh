M=/run/pmem
mkdir -p $M
# Stripe unit 2 MiB: extents aligned to 2 MiB on the device, so a DAX mapping
# can take one page fault per 2 MiB (the usual advice for fsdax).
mkfs.xfs -f -q -m reflink=1 -d su=2m,sw=1 /dev/pmem0 && "/root/.cache/splitfs-lab/xfs_set_exchrange" /dev/pmem0 >/dev/null &&
	mount -o dax=always /dev/pmem0 $M || { echo "bench-lab: no DAX file system"; exit 1; }
echo "bench-lab: $(grep pmem0 /proc/mounts)"
cd "/work/main" && BENCH_OUT=/run/share/results BENCH_MNT=$M BENCH_MNT_READY=1 BENCH_BUILT=1 	bench/run.sh --quick --only table1,fig4,table6
umount $M
