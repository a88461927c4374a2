#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the benchmarks need beyond the tests: matplotlib for the plots, and
# the applications they run.
set -eu
"$(dirname "$0")/../tests/deps.sh"
need=()
PY=$([ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
"$PY" -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
if [ ${#need[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi
