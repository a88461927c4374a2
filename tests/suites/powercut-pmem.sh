#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Power cuts on persistent memory: suites/powercut.sh with the test file
# system on the lab's emulated NVDIMM (fsdax, XFS dax=always), so SplitFS
# runs its DAX paths; the same workloads, checks and knobs (POWERCUT_CUTS:
# cuts per mode, default 6; hundreds with `make test-dax`).
POWERCUT_MEDIA=pmem exec "$(dirname "$0")/powercut.sh" "$@"
