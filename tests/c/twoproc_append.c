/* SPDX-License-Identifier: Apache-2.0 */
/* Description: two independent processes (the second started with
 * posix_spawn, so it initialises its own library) open one file and append
 * records with O_APPEND, with an fsync every few records, concurrently.
 * Every record of both must be in the file exactly once and intact, both as
 * the processes read it and as the kernel holds it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "records.h"

static uint64_t nrec; /* each writer's: 3000, SFS_TEST_SCALE scales it */

extern char **environ;

static int append_records(const char *path, uint32_t writer)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return 1;
	for (uint64_t i = 0; i < nrec; i++) {
		struct rec r;
		rec_make(&r, writer, i);
		if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
			return 1;
		if (i % 7 == 6 && fsync(fd) != 0)
			return 1;
	}
	return close(fd) != 0;
}

static void verify(const char *what, const unsigned char *data, long size)
{
	T_CHECK(size == 2L * (long)nrec * 64, "%s: size %ld want %ld", what, size,
		2L * (long)nrec * 64);
	long bad, missing;
	rec_count_two(data, size, nrec, &bad, &missing);
	T_CHECK(bad == 0 && missing == 0, "%s: %ld bad or out-of-order records, %ld missing", what,
		bad, missing);
}

int main(int argc, char **argv)
{
	nrec = (uint64_t)t_scaled(3000, 300);
	if (argc > 2 && strcmp(argv[1], "--writer") == 0)
		return append_records(argv[2], 1);
	const char *dir = argc > 1 ? argv[1] : ".";
	char *path = t_path(dir, "twoproc.dat");
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	T_REQUIRE(fd >= 0, "create");
	close(fd);

	pid_t pid;
	char *args[] = {argv[0], "--writer", path, NULL};
	T_REQUIRE(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) == 0, "spawn");
	T_CHECK(append_records(path, 0) == 0, "writer 0");
	int status;
	T_REQUIRE(waitpid(pid, &status, 0) == pid, "wait");
	T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer 1 status %d", status);

	unsigned char *buf;
	long size = t_read_kernel(path, &buf);
	verify("kernel view", buf, size);
	free(buf);

	fd = open(path, O_RDONLY);
	struct stat st;
	T_REQUIRE(fd >= 0 && fstat(fd, &st) == 0, "reopen");
	buf = malloc((size_t)st.st_size + 1);
	T_CHECK(pread(fd, buf, (size_t)st.st_size, 0) == st.st_size, "read back");
	verify("read back", buf, st.st_size);
	free(buf);
	close(fd);
	unlink(path);
	return t_result();
}
