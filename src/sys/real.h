/* SPDX-License-Identifier: Apache-2.0 */
/* The real libc functions, each looked up with dlsym(RTLD_NEXT) at its
 * first use (SFS_REAL): a process pays for the ones it calls, not for the
 * ~130 rows (25 us at every start when they were all looked up then). The
 * library never calls its own exported names: every internal system call
 * goes through SFS_REAL. The list is data (one row per function); the
 * wrappers are written out in the other files of this folder. */
#ifndef SFS_SYS_REAL_H
#define SFS_SYS_REAL_H

#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <utime.h>
#include <wchar.h>

#include "../util/compiler.h"

/* X(return type, name, parameter list). Rows marked OPT may be missing from
 * an older libc; the wrapper then answers ENOSYS. */
#define SFS_REAL_FUNCS(X)                                                                          \
	X(int, open, (const char *, int, ...))                                                     \
	X(int, openat, (int, const char *, int, ...))                                              \
	X(int, __open_2, (const char *, int))                                                      \
	X(int, __openat_2, (int, const char *, int))                                               \
	X(int, creat, (const char *, mode_t))                                                      \
	X(ssize_t, read, (int, void *, size_t))                                                    \
	X(ssize_t, __read_chk, (int, void *, size_t, size_t))                                      \
	X(ssize_t, pread, (int, void *, size_t, off_t))                                            \
	X(ssize_t, __pread_chk, (int, void *, size_t, off_t, size_t))                              \
	X(ssize_t, __pread64_chk, (int, void *, size_t, off_t, size_t))                            \
	X(ssize_t, readv, (int, const struct iovec *, int))                                        \
	X(ssize_t, preadv, (int, const struct iovec *, int, off_t))                                \
	X(ssize_t, preadv2, (int, const struct iovec *, int, off_t, int))                          \
	X(ssize_t, write, (int, const void *, size_t))                                             \
	X(ssize_t, pwrite, (int, const void *, size_t, off_t))                                     \
	X(ssize_t, writev, (int, const struct iovec *, int))                                       \
	X(ssize_t, pwritev, (int, const struct iovec *, int, off_t))                               \
	X(ssize_t, pwritev2, (int, const struct iovec *, int, off_t, int))                         \
	X(off_t, lseek, (int, off_t, int))                                                         \
	X(int, fsync, (int))                                                                       \
	X(int, fdatasync, (int))                                                                   \
	X(int, sync_file_range, (int, off_t, off_t, unsigned int))                                 \
	X(int, syncfs, (int))                                                                      \
	X(void, sync, (void))                                                                      \
	X(int, ftruncate, (int, off_t))                                                            \
	X(int, truncate, (const char *, off_t))                                                    \
	X(int, fallocate, (int, int, off_t, off_t))                                                \
	X(int, posix_fallocate, (int, off_t, off_t))                                               \
	X(int, close, (int))                                                                       \
	X(int, close_range, (unsigned int, unsigned int, int))                                     \
	X(void, closefrom, (int))                                                                  \
	X(int, dup, (int))                                                                         \
	X(int, dup2, (int, int))                                                                   \
	X(int, dup3, (int, int, int))                                                              \
	X(int, fcntl, (int, int, ...))                                                             \
	X(int, fcntl64, (int, int, ...))                                                           \
	X(int, lockf, (int, int, off_t))                                                           \
	X(int, flock, (int, int))                                                                  \
	X(int, pipe, (int[2]))                                                                     \
	X(int, pipe2, (int[2], int))                                                               \
	X(int, socket, (int, int, int))                                                            \
	X(int, socketpair, (int, int, int, int[2]))                                                \
	X(int, accept, (int, struct sockaddr *, socklen_t *))                                      \
	X(int, accept4, (int, struct sockaddr *, socklen_t *, int))                                \
	X(DIR *, opendir, (const char *))                                                          \
	X(DIR *, fdopendir, (int))                                                                 \
	X(ssize_t, getdents64, (int, void *, size_t))                                              \
	X(void, _exit, (int))                                                                      \
	X(void, pthread_exit, (void *))                                                            \
	X(void, _Exit, (int))                                                                      \
	X(int, fstat, (int, struct stat *))                                                        \
	X(int, stat, (const char *, struct stat *))                                                \
	X(int, lstat, (const char *, struct stat *))                                               \
	X(int, fstatat, (int, const char *, struct stat *, int))                                   \
	X(int, statx, (int, const char *, int, unsigned int, struct statx *))                      \
	X(int, unlink, (const char *))                                                             \
	X(int, unlinkat, (int, const char *, int))                                                 \
	X(int, rename, (const char *, const char *))                                               \
	X(int, renameat, (int, const char *, int, const char *))                                   \
	X(int, renameat2, (int, const char *, int, const char *, unsigned int))                    \
	X(int, remove, (const char *))                                                             \
	X(int, futimens, (int, const struct timespec *))                                           \
	X(int, utimensat, (int, const char *, const struct timespec *, int))                       \
	X(int, utimes, (const char *, const struct timeval *))                                     \
	X(int, utime, (const char *, const struct utimbuf *))                                      \
	X(int, futimes, (int, const struct timeval *))                                             \
	X(int, lutimes, (const char *, const struct timeval *))                                    \
	X(int, futimesat, (int, const char *, const struct timeval *))                             \
	X(void *, mmap, (void *, size_t, int, int, int, off_t))                                    \
	X(ssize_t, sendfile, (int, int, off_t *, size_t))                                          \
	X(ssize_t, copy_file_range, (int, off_t *, int, off_t *, size_t, unsigned int))            \
	X(ssize_t, splice, (int, off_t *, int, off_t *, size_t, unsigned int))                     \
	X(ssize_t, sendmsg, (int, const struct msghdr *, int))                                     \
	X(int, sendmmsg, (int, struct mmsghdr *, unsigned int, int))                               \
	X(pid_t, fork, (void))                                                                     \
	X(int, execve, (const char *, char *const[], char *const[]))                               \
	X(int, execv, (const char *, char *const[]))                                               \
	X(int, execvp, (const char *, char *const[]))                                              \
	X(int, execvpe, (const char *, char *const[], char *const[]))                              \
	X(int, fexecve, (int, char *const[], char *const[]))                                       \
	X(int, execveat, (int, const char *, char *const[], char *const[], int))                   \
	X(int, posix_spawn,                                                                        \
	  (pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,   \
	   char *const[], char *const[]))                                                          \
	X(int, posix_spawnp,                                                                       \
	  (pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,   \
	   char *const[], char *const[]))                                                          \
	X(int, posix_spawn_file_actions_init, (posix_spawn_file_actions_t *))                      \
	X(int, posix_spawn_file_actions_destroy, (posix_spawn_file_actions_t *))                   \
	X(int, posix_spawn_file_actions_adddup2, (posix_spawn_file_actions_t *, int, int))         \
	X(int, system, (const char *))                                                             \
	X(FILE *, popen, (const char *, const char *))                                             \
	X(FILE *, fopen, (const char *, const char *))                                             \
	X(FILE *, fopen64, (const char *, const char *))                                           \
	X(FILE *, fdopen, (int, const char *))                                                     \
	X(FILE *, freopen, (const char *, const char *, FILE *))                                   \
	X(FILE *, freopen64, (const char *, const char *, FILE *))                                 \
	X(int, fclose, (FILE *))                                                                   \
	X(int, mkstemp, (char *))                                                                  \
	X(int, mkostemp, (char *, int))                                                            \
	X(int, mkstemps, (char *, int))                                                            \
	X(int, mkostemps, (char *, int, int))                                                      \
	X(int, fflush, (FILE *))                                                                   \
	X(int, fflush_unlocked, (FILE *))                                                          \
	X(size_t, fwrite, (const void *, size_t, size_t, FILE *))                                  \
	X(size_t, fwrite_unlocked, (const void *, size_t, size_t, FILE *))                         \
	X(int, fputs, (const char *, FILE *))                                                      \
	X(int, fputs_unlocked, (const char *, FILE *))                                             \
	X(int, puts, (const char *))                                                               \
	X(int, fputc, (int, FILE *))                                                               \
	X(int, fputc_unlocked, (int, FILE *))                                                      \
	X(int, __overflow, (FILE *, int))                                                          \
	X(int, vfprintf, (FILE *, const char *, va_list))                                          \
	X(int, __vfprintf_chk, (FILE *, int, const char *, va_list))                               \
	X(wint_t, fputwc, (wchar_t, FILE *))                                                       \
	X(wint_t, fputwc_unlocked, (wchar_t, FILE *))                                              \
	X(int, fputws, (const wchar_t *, FILE *))                                                  \
	X(int, fputws_unlocked, (const wchar_t *, FILE *))                                         \
	X(int, vfwprintf, (FILE *, const wchar_t *, va_list))                                      \
	X(int, __vfwprintf_chk, (FILE *, int, const wchar_t *, va_list))                           \
	X(int, vdprintf, (int, const char *, va_list))                                             \
	X(int, __vdprintf_chk, (int, int, const char *, va_list))                                  \
	X(void, perror, (const char *))                                                            \
	X(void, psignal, (int, const char *))                                                      \
	X(void, psiginfo, (const siginfo_t *, const char *))                                       \
	X(void, vwarn, (const char *, va_list))                                                    \
	X(void, vwarnx, (const char *, va_list))                                                   \
	X(void, error, (int, int, const char *, ...))                                              \
	X(void, error_at_line, (int, int, const char *, unsigned, const char *, ...))              \
	X(int, mkdir, (const char *, mode_t))                                                      \
	X(int, mkdirat, (int, const char *, mode_t))                                               \
	X(int, rmdir, (const char *))                                                              \
	X(int, link, (const char *, const char *))                                                 \
	X(int, linkat, (int, const char *, int, const char *, int))                                \
	X(int, symlink, (const char *, const char *))                                              \
	X(int, symlinkat, (const char *, int, const char *))                                       \
	X(int, mknod, (const char *, mode_t, dev_t))                                               \
	X(int, mknodat, (int, const char *, mode_t, dev_t))                                        \
	X(int, mkfifo, (const char *, mode_t))                                                     \
	X(int, mkfifoat, (int, const char *, mode_t))                                              \
	X(int, chmod, (const char *, mode_t))                                                      \
	X(int, fchmod, (int, mode_t))                                                              \
	X(int, fchmodat, (int, const char *, mode_t, int))                                         \
	X(int, lchmod, (const char *, mode_t))                                                     \
	X(int, chown, (const char *, uid_t, gid_t))                                                \
	X(int, fchown, (int, uid_t, gid_t))                                                        \
	X(int, lchown, (const char *, uid_t, gid_t))                                               \
	X(int, fchownat, (int, const char *, uid_t, gid_t, int))                                   \
	X(int, ioctl, (int, unsigned long, ...))                                                   \
	X(long, syscall, (long, ...))                                                              \
	X(int, sigaction, (int, const struct sigaction *, struct sigaction *))                     \
	X(__sighandler_t, signal, (int, __sighandler_t))

struct sfs_real_table {
#define SFS_X(ret, name, args) ret(*name) args;
	SFS_REAL_FUNCS(SFS_X)
#undef SFS_X
};

extern struct sfs_real_table sfs_real;

enum sfs_real_row {
#define SFS_X(ret, name, args) SFS_REAL_ROW_##name,
	SFS_REAL_FUNCS(SFS_X)
#undef SFS_X
		SFS_REAL_ROWS
};

/* Looks row up, stores it in sfs_real and returns it; NULL when this libc
 * lacks it (then asked again at each call: rows that may be missing are
 * rarely called). Safe from any thread: racing lookups store one value. */
void *sfs_real_lookup(enum sfs_real_row row);

/* The real function fn (a row of SFS_REAL_FUNCS), looked up at first use. A
 * lookup is a dlsym, which a signal handler must not make (it could have
 * interrupted the loader): whatever installs a handler that can run the
 * library's code resolves every row first (sfs_real_resolve). */
#define SFS_REAL(fn)                                                                               \
	({                                                                                         \
		__typeof__(sfs_real.fn) real_ = __atomic_load_n(&sfs_real.fn, __ATOMIC_RELAXED);   \
		sfs_likely(real_ != NULL) ?                                                        \
			real_ :                                                                    \
			(__typeof__(sfs_real.fn))sfs_real_lookup(SFS_REAL_ROW_##fn);               \
	})

/* Looks up every row. Safe to call more than once and from any thread. */
void sfs_real_resolve(void);

/* Set when the application installed a signal handler before the library's
 * start, which then resolves every row. */
extern atomic_bool sfs_real_handler_seen;

/* getdents64 as the system call (SFS_REAL(syscall)), for the library's own
 * listings (util/dirscan.h): SFS_REAL(getdents64) is the next object's,
 * which a later preload may wrap for the program. */
ssize_t sfs_kernel_getdents64(int fd, void *buf, size_t len);

/* The start of a small kernel file (/proc, /sys) in buf, NUL-terminated:
 * its length, or -1 when it cannot be opened or read. Plain system calls
 * (a signal handler may ask), and errno as it was. */
ssize_t sfs_kernel_read_text(const char *path, char *buf, size_t size);

#endif
