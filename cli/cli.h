/* SPDX-License-Identifier: Apache-2.0 */
/* The splitfs command: subcommands and shared helpers. Exit codes: 0 success,
 * 1 failure, 2 usage error. Messages: "splitfs: <cmd>: <what>: <why>". */
#ifndef SFS_CLI_H
#define SFS_CLI_H

#include <stdbool.h>
#include <stdint.h>

#define EXIT_USAGE 2

int cmd_image(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_recover(int argc, char **argv);

/* Prints "splitfs: <fmt>" to stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs argv (a NULL-terminated list) and waits; quiet hides its stdout.
 * Returns its exit status, or -1 if it could not run. */
int cli_spawn(char *const argv[], bool quiet);

/* The directory holding this executable (to find libsplitfs.so). */
int cli_self_dir(char *buf, size_t len);

/* Puts the path of the library `run` preloads in lib (libpath.c says where
 * it looks). Returns 0, or -errno after saying why. */
int cli_find_library(char *lib, size_t len);

#endif
