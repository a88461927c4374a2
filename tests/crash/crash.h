/* SPDX-License-Identifier: Apache-2.0 */
/* The crash harness's workloads and checkers (tests/crash/README.md).
 *
 * A workload runs until it is killed (SIGKILL, or the whole machine is cut
 * off), and reports every operation to an acknowledgement file on another
 * file system: "B ..." before it starts an operation, "W ..." when a write
 * returned, "S ..." when an fsync returned, "A ..." when a namespace
 * operation returned. Each line is one write(2) of a whole line, so what
 * the file holds after the crash is a complete history up to some point
 * (a torn last line is ignored). The checker then reads what the file
 * system holds (after recovery) and compares it with that history under
 * the rules of the mode and of the kind of crash. */
#ifndef SFS_CRASH_H
#define SFS_CRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum crash_mode { MODE_POSIX, MODE_SYNC, MODE_STRICT };
enum crash_kind { KIND_KILL, KIND_POWER };

/* --- the acknowledgement file ------------------------------------------- */

/* Opens (creates, empties) the ack file for a workload. */
void ack_open(const char *path);
/* Appends one line, e.g. ack("W %u", seq). */
void ack(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The complete lines of an ack file (malloc'd array of pointers into one
 * buffer, NULL-terminated). */
char **ack_read(const char *path, size_t *n);

/* --- deterministic content ---------------------------------------------- */

uint32_t mix32(uint32_t x);
uint32_t crc32_sw(uint32_t crc, const void *p, size_t n);
/* Fills buf with the bytes of stream `stream` from offset `at`. */
void fill_stream(unsigned char *buf, size_t n, uint32_t stream, uint64_t at);

/* A simple xorshift generator for the workloads' choices. */
uint32_t rnd(uint64_t *state);

/* --- workloads and checkers (one pair per file) ------------------------- */

int run_append(const char *dir, uint64_t seed, bool nosync);
int check_append(const char *dir, char **acks, size_t n, enum crash_mode m, enum crash_kind k);
/* The appender in 4 threads of one process, each on its own file. */
int run_append_threads(const char *dir, uint64_t seed);
int check_append_threads(const char *dir, char **acks, size_t n, enum crash_mode m,
			 enum crash_kind k);

int run_overwrite(const char *dir, uint64_t seed);
int run_overwrite_threads(const char *dir, uint64_t seed);
int check_overwrite(const char *dir, char **acks, size_t n, enum crash_mode m, enum crash_kind k);

/* truncates: the "truncate" workload, mixed's operations weighted towards
 * truncate(2) (mixed.c); both are checked by check_mixed. */
int run_mixed(const char *dir, uint64_t seed, bool truncates);
int check_mixed(const char *dir, char **acks, size_t n, enum crash_mode m, enum crash_kind k);

/* Reports a violation (the checker's exit code becomes 1). */
void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int violations;

/* Reads a whole file; returns its size or -1 (errno). *buf is malloc'd. */
long read_file(const char *path, unsigned char **buf);

#endif
