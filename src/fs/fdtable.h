/* SPDX-License-Identifier: Apache-2.0 */
/* fd -> open-file table. Lookups are lock-free (one load of the array, one of
 * the slot, one reference increment); installs and removals take a mutex.
 * The array only grows; old arrays are kept (never freed) so a lock-free
 * reader holding one stays safe. A slot holds NULL (not ours: pass through),
 * a struct sfs_file (a managed file), SFS_FD_INTERNAL (one of the
 * library's own descriptors, which the application must not touch), or
 * SFS_FD_DSYNC (sync and strict modes: a descriptor of a file left to the
 * kernel, whose writes the wrappers make durable before returning). */
#ifndef SFS_FS_FDTABLE_H
#define SFS_FS_FDTABLE_H

#include <stdbool.h>

struct sfs_file;

#define SFS_FD_INTERNAL ((struct sfs_file *)1)
#define SFS_FD_DSYNC ((struct sfs_file *)2)

/* Returns the managed file at fd with a reference taken, or NULL (also NULL
 * for internal fds). Release with sfs_file_put. */
struct sfs_file *sfs_fd_get(int fd);

bool sfs_fd_is_internal(int fd);

/* Installs f at fd, taking a new reference on f. */
int sfs_fd_install(int fd, struct sfs_file *f);

/* Removes fd; returns the file whose table reference the caller now owns,
 * or NULL (internal fds are not removed: use sfs_fd_set_internal). */
struct sfs_file *sfs_fd_remove(int fd);

void sfs_fd_set_internal(int fd, bool internal);

bool sfs_fd_is_dsync(int fd);

/* Marks (or unmarks) fd as SFS_FD_DSYNC; a managed entry is left alone. */
void sfs_fd_set_dsync(int fd, bool dsync);

/* One past the highest fd that has ever had an entry. */
int sfs_fd_limit(void);

/* Forgets every entry without touching the files (a forked child); the
 * SFS_FD_DSYNC marks stay (the child inherited those descriptors), and with
 * dsync the managed descriptors become marked too. */
void sfs_fd_reset(bool dsync);

#endif
