# SPDX-License-Identifier: Apache-2.0
# Sourced by the suites that count system calls with `strace -f -c`
# (suites/strace.sh, suites/dax-syscalls.sh).

# The read/write family: every call that moves file data.
STRACE_RW_FAMILY="read pread64 readv preadv preadv2 write pwrite64 writev pwritev pwritev2"

# strace_calls FILE NAME...: the summed call counts of those syscalls in a
# strace -c summary (columns: % time, seconds, usecs/call, calls, [errors,]
# syscall).
strace_calls() {
	local f=$1
	shift
	awk -v names=" $* " '$1 ~ /^[0-9.]+$/ && $NF != "total" && index(names, " " $NF " ") {n += $4}
		END {print n + 0}' "$f"
}
