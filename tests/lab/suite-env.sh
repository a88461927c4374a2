# SPDX-License-Identifier: Apache-2.0
# Sourced by the suites that boot the lab (suites/powercut.sh, dax.sh), after
# tests/lib.sh and with REPO set: makes the lab ready (tests/lab/setup.sh)
# or skips the suite with setup's reason, and exports LAB_DIR and LAB_BIND
# (the repository and the build directory when they lie under /tmp, /run or
# /var/tmp, where the guest has its own tmpfs); defines lab_guest_started and
# lab_console_excerpt (below).
lab_out=$("$REPO/tests/lab/setup.sh" 2>&1) || skip "$(tail -n 1 <<<"$lab_out")"
export LAB_DIR=${lab_out##*lab: ready in }
lab_bind=()
for p in "$REPO" "$SFS_BUILD"; do
	case $p in /tmp/* | /run/* | /var/tmp/*) lab_bind+=("$p") ;; esac
done
LAB_BIND=$(IFS=,; echo "${lab_bind[*]}")
export LAB_BIND

# lab_guest_started CONSOLE: whether the guest reached guest-init.sh (our
# code). A guest that stopped before that never touched a disk, so its boot
# can be run again as it was. Seen about once in 20-40 boots, here and on CI,
# until run-guest.sh booted on one vCPU with tsc=reliable: "Oops: int3" in
# sched_clock_cpu 2-3 s into the boot, while the kernel patches its own code
# with int3 breakpoints (static keys), which QEMU's multi-threaded TCG does
# not always see in time on the other vCPU. Kept for what else may crash a
# guest kernel before our code runs.
lab_guest_started() { grep -q 'guest-init: uptime' "$1" 2>/dev/null; }

# lab_console_excerpt CONSOLE [N]: the guest kernel's report of a crash (from
# the first BUG/Oops/panic line, 40 lines), else the console's last N lines
# (default 8); each line prefixed "    console| ".
lab_console_excerpt() {
	local first
	first=$(grep -nE '(BUG:|Oops|general protection|Kernel panic|WARNING:|Call Trace|RIP:)' "$1" 2>/dev/null |
		head -n 1 | cut -d: -f1)
	if [ -n "$first" ]; then
		sed -n "$((first > 3 ? first - 3 : 1)),$((first + 40))p" "$1"
	else
		tail -n "${2:-8}" "$1"
	fi | tr -d '\r' | sed 's/^/    console| /'
}
