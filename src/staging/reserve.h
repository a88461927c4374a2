/* SPDX-License-Identifier: Apache-2.0 */
/* Space for staged appends. A write() the kernel serves takes its blocks
 * from the file system at once (delayed allocation reserves them), so a
 * full file system fails that very write with ENOSPC. Staged bytes take
 * their blocks only when relinked, later. So the library reserves them as
 * it stages: blocks allocated to a file of its own in <root>/.splitfs
 * (unnamed; fallocate with KEEP_SIZE, which no RLIMIT_FSIZE limits and
 * which touches no file of the application's, nor its times), given back
 * just before a window goes into its file: punched out of that file when
 * the file system is short of room, else kept (up to two steps above what
 * is owed) for the appends that follow. A process that dies gives its
 * reservation back with it. */
#ifndef SFS_STAGING_RESERVE_H
#define SFS_STAGING_RESERVE_H

#include <stdint.h>

/* The reservation is split in this many shards, each its own file and lock
 * (threads take from the shard of their reader slot: fs/inolock.h). */
#define SFS_RESERVE_SHARDS 16

/* Reserves bytes (whole blocks) for staged appends from a shard. 0, or
 * -ENOSPC (the caller asks the kernel, which answers as it would have). */
int sfs_reserve_take(int shard, int64_t bytes);

/* Gives bytes of the reservation back to the shard they were taken from (a
 * window is about to be relinked, or was dropped). */
void sfs_reserve_give(int shard, int64_t bytes);

/* A forked child: the parent's reservation is not its own. */
void sfs_reserve_reset_child(void);

#endif
