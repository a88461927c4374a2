M=/run/pmem
mkdir -p $M
ndctl create-namespace -f -e namespace0.0 -m fsdax -M mem >/dev/null || { echo "no ns"; exit 1; }
LAB_DIR="<tests/lab/setup.sh's folder>" sh /work/main/tests/lab/mkfs-pmem.sh /dev/pmem0 && mount -o dax=always /dev/pmem0 $M || exit 1
for i in 1 2 3 4 5 6; do
 for c in old new exch; do
  d=$M/$c.$i; mkdir -p $d
  case $c in
   old) r="/work/main/build/splitfs run --root $M --mode posix --" ;;
   new) r="/work/wt-dax/build/splitfs run --root $M --mode posix --" ;;
   exch) r="/work/main/build/splitfs run --root $M --mode posix --relink exchange --" ;;
  esac
  sync; echo 3 > /proc/sys/vm/drop_caches
  echo "$c $i $($r /work/main/build/bench/fig4 $d 64 append 2>/dev/null | head -1)"
  rm -rf $d
 done
done
umount $M
