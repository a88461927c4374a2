/* SPDX-License-Identifier: Apache-2.0 */
/* Sets of files (by dev and inode number) the process keeps apart from the
 * library's usual handling (kernel_files.c). */
#ifndef SFS_FS_KERNEL_FILES_H
#define SFS_FS_KERNEL_FILES_H

#include <stdbool.h>
#include <sys/types.h>

/* A forked child: the sets' locks are usable again (kernel_files.c). */
void sfs_kernel_sets_reset(void);

/* Files on which the process took POSIX record locks (through any
 * descriptor): the library must not close a descriptor of them while the
 * application may hold locks (a close drops them all). */
bool sfs_posix_locked(dev_t dev, ino_t ino);
void sfs_posix_locked_add(dev_t dev, ino_t ino);

#endif
