# SPDX-License-Identifier: Apache-2.0
# Sourced by the suites that boot the lab (suites/powercut.sh, dax.sh), after
# tests/lib.sh and with REPO set: makes the lab ready (tests/lab/setup.sh)
# or skips the suite with setup's reason, and exports LAB_DIR and LAB_BIND
# (the repository and the build directory when they lie under /tmp, /run or
# /var/tmp, where the guest has its own tmpfs).
lab_out=$("$REPO/tests/lab/setup.sh" 2>&1) || skip "$(tail -n 1 <<<"$lab_out")"
export LAB_DIR=${lab_out##*lab: ready in }
lab_bind=()
for p in "$REPO" "$SFS_BUILD"; do
	case $p in /tmp/* | /run/* | /var/tmp/*) lab_bind+=("$p") ;; esac
done
LAB_BIND=$(IFS=,; echo "${lab_bind[*]}")
export LAB_BIND
