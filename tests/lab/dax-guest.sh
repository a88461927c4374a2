# SPDX-License-Identifier: Apache-2.0
# The guest side of tests/suites/dax.sh (the share's job.sh): makes an fsdax
# namespace (struct pages in memory) on the emulated NVDIMM, XFS (reflink,
# exchange-range) on its /dev/pmem0, mounts it with
# dax=always, checks that files on it are DAX, and runs tests/run.sh on it
# (SFS_MNT_READY=1) with the suites and knobs the host wrote to
# /run/share/plan:
#   REPO=... BUILD=... LAB_DIR=... SUITES="..." ENV="NAME=VALUE ..."
# Output: /run/share/run.out (tests/run.sh's summary), run.rc, the suites'
# logs in /run/share/out/.
set -u
S=/run/share
. $S/plan
M=/run/pmem
echo "dax-guest: $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs," \
	"flush instructions: $(grep -o -w -E 'clwb|clflushopt' /proc/cpuinfo | sort -u | tr '\n' ' ')"
fail() {
	echo "dax-guest: $*" | tee $S/run.out
	echo 1 >$S/run.rc
	exit 1
}
ndctl create-namespace -f -e namespace0.0 -m fsdax -M mem >/dev/null 2>&1 ||
	fail "ndctl create-namespace failed (pmem modules: $(lsmod | grep -c nd_))"
[ -b /dev/pmem0 ] || fail "no /dev/pmem0 after making the namespace"
mkdir -p $M
err=$(LAB_DIR=$LAB_DIR sh "$REPO/tests/lab/mkfs-pmem.sh" /dev/pmem0 2>&1) || fail "$err"
mount -o dax=always /dev/pmem0 $M || fail "mount -o dax=always failed: $(dmesg | tail -n 3)"
: >$M/probe
attr=$(xfs_io -c "statx -r" $M/probe | sed -n 's/^stat.attributes = //p')
[ $((${attr:-0} & 0x200000)) -ne 0 ] || fail "files on $M are not DAX (statx attributes ${attr:-none})"
rm -f $M/probe
echo "dax-guest: $(grep pmem0 /proc/mounts)"
# shellcheck disable=SC2086
env SFS_MNT=$M SFS_MNT_READY=1 SFS_MNT2=/tmp/sfs-tmpfs SFS_TEST_OUT=$S/out SFS_BUILD="$BUILD" \
	$ENV "$REPO/tests/run.sh" $SUITES >$S/run.out 2>&1
echo $? >$S/run.rc
cat $S/run.out
umount $M || echo "dax-guest: umount failed"
