/* SPDX-License-Identifier: Apache-2.0 */
/* Offsets that live in the kernel's open file.
 *
 * The library keeps a managed open file's offset in its struct sfs_file and
 * leaves the kernel's (the application's descriptors') where it was. stdio
 * reads and writes descriptors 0, 1 and 2 through libc's internal calls,
 * which the library does not see: those go to the kernel at the kernel's
 * offset. A program that opens a file onto one of them (a shell's `> f`
 * with its builtins, a daemon's log dup2'd onto 1 and 2, `close(1); open`)
 * and mixes its own writes with stdio's would then see each overwrite the
 * other, and a forked child start at an offset without stdio's bytes.
 *
 * So a file installed at descriptor 0, 1 or 2 keeps its offset in the
 * kernel's open file from then on (two lseeks a call), and between calls
 * the kernel's file is whole (nothing staged), so that an unseen write
 * lands where the kernel would put it and nothing of the library's later
 * lands on it. A pull that finds the kernel's offset moved since the last
 * push knows unseen calls came between: the library learns the file's
 * size again and, in sync and strict modes, retires its log records (an
 * older record replayed after a crash must not run over them) and makes
 * the file durable, as it does at stdio's fflush and when such a
 * descriptor goes. A file
 * given back to the kernel keeps the kernel's offset (process.c). Other
 * descriptors are not written unseen (dprintf is wrapped: interpose/
 * printf.c) and pay nothing. */
#ifndef SFS_FS_KPOS_H
#define SFS_FS_KPOS_H

#include <stdatomic.h>
#include <stdbool.h>

#include "../util/compiler.h"
#include "file.h"

static inline bool sfs_file_kpos_on(struct sfs_file *f)
{
	return atomic_load_explicit(&f->kpos, memory_order_relaxed);
}

/* sfs_fd_install of f at descriptor fd, the way every managed file gets
 * one: at 0-2 its offset lives in the kernel from then on (staged data
 * relinked, the offset pushed). */
void sfs_file_install(int fd, struct sfs_file *f);

/* Before a call through fd that uses f's offset: when the offset lives in
 * the kernel, takes f->kpos_lock and sets f->pos from fd's open file.
 * Returns whether it did (then sfs_file_kpos_push after the call). */
bool sfs_file_kpos_pull_slow(struct sfs_file *f, int fd);
static inline bool sfs_file_kpos_pull(struct sfs_file *f, int fd)
{
	return sfs_unlikely(sfs_file_kpos_on(f)) && sfs_file_kpos_pull_slow(f, fd);
}

/* After the call: what it staged relinked, f->pos to fd's open file, and
 * f->kpos_lock released. Preserves errno. */
void sfs_file_kpos_push(struct sfs_file *f, int fd);

/* stdio may have written through f's descriptor fd unseen: its fflush
 * returned, or fd goes (a close, a dup2 over it). In sync and strict modes
 * what it wrote through a descriptor 0-2 is made durable now, as the
 * library's own writes are. */
void sfs_file_kpos_settle(struct sfs_file *f, int fd);

#endif
