#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what the build, the tests and the demo need, when missing:
# Debian packages (apt-get) and the peer suites fsx and pjdfstest (cargo).
set -eu
need_pkgs=()
have() { command -v "$1" >/dev/null 2>&1; }
want() { have "$1" || need_pkgs+=("$2"); }
want gcc gcc
# The clang build (make CC=clang BUILD=build-clang all tests, .ci/run).
want clang clang
want make make
want mkfs.xfs xfsprogs
want mkfs.ext4 e2fsprogs
want mkfs.btrfs btrfs-progs
want sqlite3 sqlite3
want git git
want rsync rsync
want redis-server redis-server
want redis-cli redis-tools
# The apps-postgres suite: Debian's PostgreSQL (server, psql, pgbench,
# pg_amcheck, pg_checksums), run as the user postgres the package makes.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_pkgs+=(postgresql)
want strace strace
want bc bc
want python3 python3
want tar tar
want mount mount
# make install's check (tests/install-check.sh): pkg-config, the man pages.
want pkg-config pkg-config
want man man-db
want groff groff-base
want readelf binutils
# make format-check (.ci/run): the layout of .clang-format.
want clang-format clang-format
[ -e /usr/include/libpmem2.h ] || need_pkgs+=(libpmem2-dev)
if [ ${#need_pkgs[@]} -gt 0 ]; then
	echo "deps: installing ${need_pkgs[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
# The apps-pystdlib suite: CPython's own tests, which Debian packages apart
# from python3, for its version (installed above when it was missing).
if ! /usr/bin/python3 -c 'import test.libregrtest, test.test_os' 2>/dev/null; then
	pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	echo "deps: installing libpython$pyver-testsuite"
	[ ${#need_pkgs[@]} -gt 0 ] || apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "libpython$pyver-testsuite" >/dev/null
fi
CARGO_BIN=${CARGO_HOME:-$HOME/.cargo}/bin
export PATH=$CARGO_BIN:$PATH
if ! have fsx || ! have pjdfstest; then
	if ! have cargo; then
		echo "deps: cargo not found; installing the Rust toolchain with rustup"
		apt-get install -y -qq curl >/dev/null
		curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal >/dev/null
		export PATH=$CARGO_BIN:$PATH
	fi
	echo "deps: cargo install fsx pjdfstest"
	cargo install --locked --quiet fsx@0.3.2 pjdfstest@0.2.2
fi
# pjdfstest switches to these users when run as root.
id tests >/dev/null 2>&1 || useradd -M -U -s /usr/sbin/nologin -c "pjdfstest dummy user" tests
# The bench code has a smoke test (tests/suites/bench-smoke.sh): its own
# packages (bench/deps.sh runs this script first, so only its part here).
[ -n "${SFS_BENCH_DEPS:-}" ] || SFS_BENCH_DEPS=1 "$(dirname "$0")/../bench/deps.sh"
"$(dirname "$0")/lab/setup.sh" || echo "deps: the lab (QEMU guest) is not available: the powercut suite will skip"
exit 0
