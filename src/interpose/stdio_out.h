/* SPDX-License-Identifier: Apache-2.0 */
/* stdio's output in sync and strict modes (stdio_out.c). */
#ifndef SFS_INTERPOSE_STDIO_OUT_H
#define SFS_INTERPOSE_STDIO_OUT_H

#include <stdbool.h>
#include <stdio.h>

/* Whether what stdio writes through fd (glibc's internal write, which no
 * wrapper sees) must be synced before the stdio call returns: in sync and
 * strict modes, a descriptor of a file on the root's file system, left to
 * the kernel (SFS_FD_DSYNC) or the library's. */
bool sfs_stdio_syncs(int fd);

/* A call that printed to fp unseen (glibc's perror, err, ...) may have
 * sent bytes: syncs fp's descriptor when sfs_stdio_syncs names it. */
void sfs_stdio_sent(FILE *fp);

/* At exit, before glibc writes out what streams still buffer (after every
 * destructor, unseen): writes it out here and syncs it. */
void sfs_stdio_exit(void);

#endif
