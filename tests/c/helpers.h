/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers for the C tests. Each test is one program that checks itself and
 * exits T_EXIT_PASS, T_EXIT_FAIL or T_EXIT_SKIP (77); it takes the directory
 * to work in as argv[1] and must pass with and without the library. */
#ifndef SFS_TEST_HELPERS_H
#define SFS_TEST_HELPERS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

extern int t_failures;

/* Records a failure with its location; the test goes on. */
#define T_CHECK(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, " (errno %d %s)\n", errno, strerror(errno));               \
			t_failures++;                                                              \
		}                                                                                  \
	} while (0)

/* Aborts the test on a failed precondition. */
#define T_REQUIRE(cond, ...)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			T_CHECK(cond, __VA_ARGS__);                                                \
			exit(T_EXIT_FAIL);                                                         \
		}                                                                                  \
	} while (0)

/* True when the program runs under libsplitfs (splitfs_version resolves). */
bool t_under_splitfs(void);

/* Whether the kernel serves path with DAX (statx's STATX_ATTR_DAX). */
bool t_on_dax(const char *path);

/* n scaled by SFS_TEST_SCALE (a factor in (0, 1], default 1: the lab's
 * emulated CPU runs the long tests smaller), never below least. */
int t_scaled(int n, int least);

/* dir/name into a static buffer (one at a time per call site). */
char *t_path(const char *dir, const char *name);

/* Deterministic content: byte i of stream seed. */
unsigned char t_byte(unsigned seed, long i);
void t_fill(unsigned char *buf, size_t n, unsigned seed, long start);

/* System call nr with four arguments by the syscall instruction itself,
 * which no library sees (the library serves libc's syscall()); the
 * kernel's result, -errno on failure. */
long t_raw4(long nr, long a, long b, long c, long d);

/* Reads the whole file with the raw system call (never the library's
 * path), so a test can check what the kernel file holds. Returns its size
 * or -1; *buf is malloc'd. */
long t_read_kernel(const char *path, unsigned char **buf);

/* Writes a new file at path with raw system calls (never the library's
 * path): n bytes of buf in pieces of `piece` bytes, then fsync. The page
 * cache then holds it in folios no larger than a piece (a 4 KiB piece: 4
 * KiB folios, as after a program that writes pages one at a time). 0 or
 * -1. */
int t_write_kernel(const char *path, const unsigned char *buf, long n, long piece);
/* Whether the kernel file (t_read_kernel) holds exactly n bytes, bytes
 * 0 .. n-1 of stream seed (t_fill). */
bool t_kernel_holds_stream(const char *path, long n, unsigned seed);

/* Reads all of fd (through libc: the library's path when it is loaded)
 * with pread from offset 0 into *buf, malloc'd with a byte to spare.
 * Returns the bytes read, fewer than *size (fd's size) where a pread
 * failed or hit the end; -1 where fstat failed (*buf untouched). Shared
 * with the crash harness's checker (tests/crash/crashtool.c). */
long t_read_fd(int fd, unsigned char **buf, long *size);

/* The value of "event NAME N" in a statistics file (SPLITFS_STATS_FILE),
 * or -1 where it has none. */
long t_stat_event(const char *file, const char *name);

int t_result(void);

/* A peer process: forked by t_peer_start() before the test opens anything
 * (so the fork shares none of its files), it runs operations on request
 * and answers. T_PEER_RAW_* use raw system calls, as a program that does not
 * use SplitFS would; T_PEER_LIBC_* use libc, as another program under the
 * library would. */
enum t_peer_op {
	T_PEER_RAW_APPEND = 1, /* open O_WRONLY|O_APPEND|O_CREAT, write data, close */
	T_PEER_RAW_TRUNCATE,   /* truncate(path, a) */
	T_PEER_RAW_READ,       /* open, pread a bytes at b, close: data */
	T_PEER_RAW_SIZE,       /* stat: st_size */
	T_PEER_RAW_FLOCK,      /* open, flock(LOCK_EX|LOCK_NB), close: 0 or -errno */
	T_PEER_LIBC_READ,      /* open, pread a bytes at b, close: data */
	T_PEER_LIBC_APPEND,    /* open O_WRONLY|O_APPEND, write data, close */
};

void t_peer_start(void);
/* Runs op on path; data/len in, out (up to *outlen) back. Returns the
 * operation's result (a count, a size, 0) or -errno. */
long t_peer(int op, const char *path, long a, long b, const void *data, size_t len, void *out,
	    size_t outlen);
void t_peer_stop(void);

/* Runs this program (/proc/self/exe) again with dir as its one argument,
 * as the tests that need a fresh start of the library do: the child sets
 * the variables of env (name, value, name, value, ..., NULL; a NULL value
 * leaves its name out), calls in_child when not NULL (what must happen
 * between the fork and the exec), and execs. Returns its wait status. */
int t_run_self(const char *dir, const char *const env[], void (*in_child)(void));

/* t_run_self with role=value in the child's environment and the library's
 * statistics on, written to stats (removed first, so that t_stat_event
 * reads this child's). Returns its wait status. */
int t_run_self_stats(const char *dir, const char *role, const char *value, const char *stats);

/* LD_PRELOAD as it is now, with the shim tests/shim/NAME.c (built by make
 * tests into shim/ beside this program's folder) preloaded after it: the
 * shim is then the next object the library calls. A static buffer. */
const char *t_preload_after(const char *name);

/* Forks with a pipe from the child to the parent: returns 0 in the child,
 * *fd the pipe's write end; in the parent the child's pid, *fd the read
 * end (the other ends closed). */
pid_t t_fork_pipe(int *fd);

/* Forks a writer: the child creates path (open with flags | O_CREAT |
 * O_TRUNC, 0644) and writes n blocks of len bytes (len <= 4096) of stream
 * seed from byte 0, exiting 3 on a short write. Then, with hold, it waits
 * to be killed and t_fork_writer returns once it has written; without,
 * it exits 0. Returns the child's pid. */
pid_t t_fork_writer(const char *path, int flags, size_t len, int n, unsigned seed, bool hold);

#endif
