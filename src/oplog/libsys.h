/* SPDX-License-Identifier: Apache-2.0 */
/* The system-call table (recover.h) recovery and adoption use inside the
 * library: the real libc functions of SFS_REAL. (The CLI has its own,
 * cli/libc_sys.c.) */
#ifndef SFS_OPLOG_LIBSYS_H
#define SFS_OPLOG_LIBSYS_H

struct sfs_sys;

/* Valid once sfs_real is resolved (start-up does that first). */
const struct sfs_sys *sfs_lib_sys(void);

#endif
