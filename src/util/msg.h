/* SPDX-License-Identifier: Apache-2.0 */
/* Diagnostics: one line each, prefixed "splitfs: ", written with the real
 * write(2) from a stack buffer (never stdio, never malloc). A warning is said
 * once per process and call site; errors every time. */
#ifndef SFS_UTIL_MSG_H
#define SFS_UTIL_MSG_H

#include <stdarg.h>
#include <stddef.h>

void sfs_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sfs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sfs_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Where messages go: a file descriptor (default 2). */
void sfs_msg_set_fd(int fd);

/* Raw writer used by msg and stats: writes all of buf to fd, retrying on
 * EINTR and short writes; preserves errno. */
void sfs_write_all(int fd, const char *buf, size_t len);

#endif
