/* SPDX-License-Identifier: Apache-2.0 */
/* The system-call table of recovery (src/oplog/recover.h) made of libc's
 * own functions: for the CLI's `recover` and the unit tests, which run
 * without the preload library (inside the library the table is made of
 * the real functions, src/oplog/libsys.c). Both are made from
 * recover.h's SFS_SYS_CALLS. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libc_sys.h"

const struct sfs_sys cli_libc_sys = {
#define CLI_LIBC_SYS(ret, name, params) .name = name,
	SFS_SYS_CALLS(CLI_LIBC_SYS)
#undef CLI_LIBC_SYS
};
