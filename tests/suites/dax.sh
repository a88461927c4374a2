#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test suites on real persistent memory: the lab's guest (tests/lab/,
# QEMU/TCG, Debian's 6.12 kernel) gets a 2 GiB emulated NVDIMM (backed by a
# file here), makes an fsdax namespace and XFS with reflink and
# exchange-range on it, mounts it dax=always and runs tests/run.sh there
# (tests/lab/dax-guest.sh), so SplitFS takes its DAX
# paths: the operation log stored through a MAP_SYNC mapping with libpmem2's
# flushes and one fence per record; in sync and strict modes overwrites as
# stores and appends staged. Power cuts on pmem are suites/powercut-pmem.sh.
#
# The emulated CPU is 5-40x slower than this one, so `make test` runs a
# bounded set with short knobs; `make test-dax` (DAX_FULL=1) runs every
# suite with its default knobs, the real applications too. Knobs: DAX_SUITES
# (the suites), DAX_TIMEOUT (seconds for the whole guest run, default 1500;
# 21600 with DAX_FULL=1: every suite at its defaults takes hours there),
# DAX_ENV (more NAME=VALUE settings for the suites in the guest, e.g.
# "SFS_APPS_REDIS_SCALE=0.2").
# Skips (exit 77) when the lab cannot be set up (tests/lab/setup.sh says why).
. "$(dirname "$0")/../lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
LAB=$REPO/tests/lab
rmdir "$WORK" 2>/dev/null # the host's test image is not used
. "$LAB/suite-env.sh" # LAB_DIR, LAB_BIND, or a skip
OUTD=${SFS_TEST_OUT:-$REPO/tests/output}/dax
SH=$OUTD/share
rm -rf "$OUTD"
mkdir -p "$SH"
T=$(mktemp -d /dev/shm/sfs-dax.XXXXXX) # the NVDIMM's backing file, in memory
trap 'rm -rf "$T"' EXIT
if [ "${DAX_FULL:-0}" = 1 ]; then
	# The real applications: one suite each (tests/suites/apps-*.sh).
	apps="apps-python3 apps-sqlite3 apps-tar apps-cp apps-git apps-rsync apps-redis"
	SUITES=${DAX_SUITES:-dax-syscalls strace c-tests errno durability entrypoints pjdfstest fsx crash $apps}
	ENV="DATAPATH_OPS=${DATAPATH_OPS:-10000} CRASH_POWER_POINTS=0 SFS_APPS_CMD_TIMEOUT=1200"
	TMO=${DAX_TIMEOUT:-21600}
else
	SUITES=${DAX_SUITES:-dax-syscalls strace c-tests errno durability pjdfstest fsx crash}
	ENV="DATAPATH_OPS=5000 STRACE_NATIVE_OPS=1000 FSX_SEEDS=1 FSX_OPS=3000 FSX_FULL_OPS=1000 FSX_BIG_OPS=1000"
	ENV="$ENV CRASH_POINTS=12 CRASH_POWER_POINTS=0 CRASH_BIGLOG=0 DURABILITY_RUNS=12"
	ENV="$ENV TORN_SECONDS=1 LEASE_RACE_SECONDS=1 FORK_LEARN_ROUNDS=24"
	# The C tests: only under the library (the host's run checks each on
	# the kernel), the long ones with a third of their rounds.
	ENV="$ENV CTESTS_KERNEL=0 SFS_TEST_SCALE=0.3"
	TMO=${DAX_TIMEOUT:-1500} # under tests/run.sh's 1600 s for this suite
fi
ENV="$ENV ${DAX_ENV:-}"
cat >"$SH/plan" <<-PLAN
	REPO='$REPO'
	BUILD='$SFS_BUILD'
	LAB_DIR='$LAB_DIR'
	SUITES='$SUITES'
	ENV='$ENV SFS_TEST_TIMEOUT=$TMO'
PLAN
export LAB_SHARE=$SH PMEM_FILE=$T/pmem.img PMEM_SIZE=2G
echo "guest: pmem 2G (emulated NVDIMM), suites: $SUITES"
run_guest() {
	local t0=$(date +%s) qrc
	timeout --kill-after=10 "$TMO" setpriv --pdeathsig KILL -- "$LAB/run-guest.sh" "$LAB/dax-guest.sh" \
		</dev/null >"$OUTD/console" 2>&1
	qrc=$?
	echo "guest ran $(($(date +%s) - t0)) s (exit $qrc)"
}
run_guest
# A guest kernel that crashed while booting, before our code ran, is booted
# once more (a note, with the crash).
if [ ! -f "$SH/run.rc" ] && ! lab_guest_started "$OUTD/console"; then
	mv "$OUTD/console" "$OUTD/console.crashed"
	echo "note: the guest's kernel stopped before guest-init.sh (nothing of ours ran): booting it again"
	lab_console_excerpt "$OUTD/console.crashed"
	run_guest
fi
grep '^dax-guest:' "$SH/job.log" 2>/dev/null
if [ ! -f "$SH/run.rc" ]; then
	echo "FAIL: the guest's run did not finish"
	lab_console_excerpt "$OUTD/console" 30
	exit 1
fi
sed 's/^/  guest| /' "$SH/run.out"
[ "$(cat "$SH/run.rc")" = 0 ] || die "suites failed on DAX (logs: $SH/out/)"
grep -q '^All tests passed' "$SH/run.out" || die "no summary from the guest's tests/run.sh"
