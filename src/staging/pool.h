/* SPDX-License-Identifier: Apache-2.0 */
/* The staging pool: empty staging files in <root>/.splitfs, made ahead of
 * time by a background thread so the append path never creates a file.
 * A staging file is an unnamed O_TMPFILE: whatever a crash leaves in it
 * vanishes with the process (POSIX mode promises nothing for data that was
 * never fsynced). Files come back from inodes through sfs_staging_put; the
 * thread empties them (ftruncate to 0, which drops their page cache without
 * writing it back) and returns them to the pool. */
#ifndef SFS_STAGING_POOL_H
#define SFS_STAGING_POOL_H

/* An empty staging file (an internal descriptor), or -errno. */
int sfs_staging_get(void);

/* Gives a staging file back (its contents are discarded). */
void sfs_staging_put(int fd);

/* A forked child: forget the pool and its thread (closing the descriptors). */
void sfs_staging_reset_child(void);

/* Stops the thread (process exit). */
void sfs_staging_shutdown(void);

#endif
