/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SFS_CLI_LIBC_SYS_H
#define SFS_CLI_LIBC_SYS_H

#include "../src/oplog/recover.h"

/* Recovery's system calls, as libc's functions (libc_sys.c). */
extern const struct sfs_sys cli_libc_sys;

#endif
