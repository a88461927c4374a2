/* SPDX-License-Identifier: Apache-2.0 */
/* util/msg.c: a warning reaches the application's stderr once per process
 * and call site, however often its cause repeats (a full table, a refused
 * dup2); errors are never held back. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../src/util/msg.h"
#include "unit.h"

/* What the messages written since the last call said: the lines are read
 * from the pipe msg writes into. */
static int msg_pipe[2] = {-1, -1};

static void capture(void)
{
	if (msg_pipe[0] < 0) {
		if (pipe2(msg_pipe, O_NONBLOCK) != 0)
			abort();
		sfs_msg_set_fd(msg_pipe[1]);
	}
}

static int lines_said(char *buf, size_t size)
{
	ssize_t n = read(msg_pipe[0], buf, size - 1);
	buf[n > 0 ? n : 0] = 0;
	int lines = 0;
	for (ssize_t i = 0; i < n; i++)
		lines += buf[i] == '\n';
	return lines;
}

/* Two call sites, each reached many times. */
static void warn_table_full(int i)
{
	sfs_warn("table full (%d)", i);
}

static void warn_refused(int fd)
{
	sfs_warn("dup2 onto descriptor %d: refused", fd);
}

U_TEST(once, "a warning site speaks once per process")
{
	char buf[4096];
	capture();
	for (int i = 0; i < 100; i++)
		warn_table_full(i);
	int n = lines_said(buf, sizeof(buf));
	U_CHECK(n == 1, "100 warnings from one site: %d lines: %s", n, buf);
	U_CHECK(strcmp(buf, "splitfs: warning: table full (0)\n") == 0, "the first is said: %s",
		buf);
	for (int i = 0; i < 100; i++)
		warn_refused(i);
	n = lines_said(buf, sizeof(buf));
	U_CHECK(n == 1, "another site still says its own, once: %d lines", n);
}

U_TEST(errors, "errors are all said")
{
	char buf[4096];
	capture();
	for (int i = 0; i < 40; i++)
		sfs_error("error %d", i);
	int n = lines_said(buf, sizeof(buf));
	U_CHECK(n == 40, "40 errors: %d lines", n);
}
