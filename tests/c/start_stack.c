/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the library's start leaves nothing of its own on the
 * program's stack. The start runs on the stack of the call that made it
 * (the constructor in sync and strict modes, the first call that names a
 * path in POSIX mode), 8-16 KiB deep, and reads the names in .splitfs
 * there. A program that reads stack it never wrote found them: coreutils'
 * sort -g compares long doubles padding included (its compiler drops the
 * memset before them), and with the start's bytes in that padding its
 * merge of two NaNs went round for ever in half the runs (its test
 * sort-NaN-infloop). The test puts a file of a unique name in .splitfs,
 * runs itself again, and looks for that name in the 24 KiB below main's
 * frame, at main's start and after a stat (POSIX mode starts there).
 * Without the library it only checks that the name is nowhere.
 *   start_stack DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define BELOW (24 << 10)

static char mark[32];

/* Copies of mark in the BELOW bytes under the caller's frame: this
 * function's own array, which it reads without writing. */
__attribute__((noinline)) static int marks_below(void)
{
	volatile char below[BELOW];
	__asm__ volatile("" : : "r"(below) : "memory"); /* "initialised" */
	size_t len = strlen(mark);
	int hits = 0;
	for (size_t i = 0; i + len <= sizeof(below); i++) {
		size_t j = 0;
		while (j < len && below[i + j] == mark[j])
			j++;
		hits += j == len;
	}
	return hits;
}

__attribute__((noinline)) static int start(const char *dir)
{
	struct stat st;
	return stat(dir, &st);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: start_stack DIR");
	const char *dir = argv[1];
	const char *child_mark = getenv("START_STACK_MARK");
	if (child_mark) {
		snprintf(mark, sizeof(mark), "%s", child_mark);
		int at_main = marks_below();
		T_REQUIRE(start(dir) == 0, "stat %s", dir);
		int after_stat = marks_below();
		T_CHECK(at_main == 0,
			"%d copies of a name in .splitfs on the stack at main's start", at_main);
		T_CHECK(after_stat == 0,
			"%d copies of a name in .splitfs on the stack after a stat", after_stat);
		return t_result();
	}
	snprintf(mark, sizeof(mark), "stackmark.%d.%ld", (int)getpid(), (long)random());
	const char *root = getenv("SPLITFS_ROOT");
	char *placed = NULL;
	if (t_under_splitfs() && root) {
		placed = strdup(t_path(t_path(root, ".splitfs"), mark));
		int fd = open(placed, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		T_REQUIRE(fd >= 0, "create %s", placed);
		close(fd);
	}
	const char *env[] = {"START_STACK_MARK", mark, NULL};
	int st = t_run_self(dir, env, NULL);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the run that looks failed (%#x)", st);
	if (placed) {
		unlink(placed);
		free(placed);
	}
	return t_result();
}
