/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers for the unit tests (tests/unit/): programs linked against the
 * objects of src/ they test, without the preload library, so they need no
 * root, no image and no managed file system. Each program is a list of
 * named cases, each written as
 *     U_TEST(name, "one line: what the case checks") { ...U_CHECK... }
 * The runner (unit.c's main) runs them all, in the order they stand, or
 * those named on the command line, prints one line per case (what it
 * checked, how many checks) and exits U_EXIT_PASS, U_EXIT_FAIL or
 * U_EXIT_SKIP (77: every case chosen skipped). */
#ifndef SFS_UNIT_H
#define SFS_UNIT_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define U_EXIT_PASS 0
#define U_EXIT_FAIL 1
#define U_EXIT_SKIP 77

struct u_case {
	const char *name;
	const char *what; /* one line: what the case checks */
	void (*fn)(void);
	struct u_case *next; /* the next case of the program (u_register) */
};

/* Adds a case at the end of the program's list (U_TEST, before main). */
void u_register(struct u_case *c);

/* Defines a case's function and registers it. Constructors of one file run
 * in the order they stand, so the cases run in the file's order. */
#define U_TEST(name, what_)                                                                        \
	static void u_test_##name(void);                                                           \
	__attribute__((constructor)) static void u_register_##name(void)                           \
	{                                                                                          \
		static struct u_case c = {#name, what_, u_test_##name, NULL};                      \
		u_register(&c);                                                                    \
	}                                                                                          \
	static void u_test_##name(void)

extern int u_checks, u_failures;

/* Counts a check; a failed one prints its place and goes on. */
#define U_CHECK(cond, ...)                                                                         \
	do {                                                                                       \
		u_checks++;                                                                        \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			u_failures++;                                                              \
		}                                                                                  \
	} while (0)

/* Ends the case on a failed precondition (counted as a failure). */
#define U_REQUIRE(cond, ...)                                                                       \
	do {                                                                                       \
		int u_f_ = u_failures;                                                             \
		U_CHECK(cond, __VA_ARGS__);                                                        \
		if (u_failures != u_f_)                                                            \
			return;                                                                    \
	} while (0)

/* Marks the running case skipped (the case then returns). */
void u_skip(const char *why);

/* A fresh directory under $TMPDIR (or /tmp), removed with its files
 * (one level) by the runner after the case; NULL on failure. */
const char *u_tmpdir(void);

#endif
