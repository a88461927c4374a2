/* SPDX-License-Identifier: Apache-2.0 */
/* A file's logged writes put back into its page cache after a writeback
 * error. Internal to oplog/ (oplog.h: sfs_oplog_sync_file).
 *
 * After a failed fdatasync the kernel reports the error once: the next
 * fdatasync returns 0, although the pages that failed never reached the
 * media (they stay in the page cache, clean, and are dropped whenever
 * memory is short). The log's records are then the only durable copy of
 * those writes; before a checkpoint or COMMIT may kill them, their bytes
 * are written into the file again, so that they are dirty and the next
 * fdatasync writes them or fails. */
#ifndef SFS_OPLOG_REWRITE_H
#define SFS_OPLOG_REWRITE_H

#include <stdint.h>

/* Writes again, at kfd, the byte ranges of the WRITE records of file id
 * that are live in the set's logs (generation gen, nonce set, after the
 * file's last COMMIT), within the file's size now. A page still in the
 * page cache is written with its own bytes (the newest, also where a
 * later write did not go through the log); a page the kernel has dropped,
 * with the bytes of the last record that covers it. The file's
 * modification time is kept. Caller holds the inode lock, and no record of
 * the file is being written. 0 or -errno. */
int sfs_log_rewrite(uint32_t id, uint64_t gen, uint64_t set, int kfd);

#endif
