/* SPDX-License-Identifier: Apache-2.0 */
/* Description: processes that append to one log by opening it with
 * O_APPEND for each record and writing through a call the library does not
 * see, as shell scripts run side by side do (`echo ... >> log`: bash's
 * builtin writes through stdio's internal write). The kernel appends each
 * such write at the end of the file, atomically, because the open file has
 * O_APPEND: the library must leave it there until it writes through that
 * open file at an offset itself. It took O_APPEND off at the open in sync
 * and strict modes (POSIX mode leaves such a file pending, the kernel's),
 * so a record went where the file ended at that open, over the other
 * process's records written since. Two processes (the second started with
 * posix_spawn, its own library) each append NREC records this way, and
 * every record must be in the file once, whole, in its writer's order.
 *   unseen_appends DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "records.h"

#define NREC 1500

extern char **environ;

static int append_records(const char *path, uint32_t writer)
{
	for (uint64_t i = 0; i < NREC; i++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd < 0)
			return 1;
		struct rec r;
		rec_make(&r, writer, i);
		/* The write the library does not see. */
		if (t_raw4(SYS_write, fd, (long)&r, sizeof(r), 0) != (long)sizeof(r))
			return 1;
		if (close(fd) != 0)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "--writer") == 0)
		return append_records(argv[2], 1);
	const char *dir = argc > 1 ? argv[1] : ".";
	char *path = t_path(dir, "unseen_appends.dat");
	unlink(path);

	pid_t pid;
	char *args[] = {argv[0], "--writer", path, NULL};
	T_REQUIRE(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) == 0, "spawn");
	T_CHECK(append_records(path, 0) == 0, "writer 0");
	int status;
	T_REQUIRE(waitpid(pid, &status, 0) == pid, "wait");
	T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer 1 status %d", status);

	unsigned char *data;
	long size = t_read_kernel(path, &data);
	T_CHECK(size == 2L * NREC * 64, "size %ld, want %ld", size, 2L * NREC * 64);
	long bad, missing;
	rec_count_two(data, size, NREC, &bad, &missing);
	T_CHECK(bad == 0 && missing == 0, "%ld bad or out-of-order records, %ld missing", bad,
		missing);
	free(data);
	unlink(path);
	return t_result();
}
