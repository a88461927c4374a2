/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the library starts on its root at a program's first call
 * that names a path, and what dead processes left is back in place before
 * that call answers. A writer appends without syncing and is killed; then
 * a new program, whose first call into the library is a stat of the file,
 * must see every byte the writer wrote (the size, then the bytes through
 * the kernel). In POSIX mode under the library, the kernel's size just
 * before that stat is still the one the writer left (nothing started at
 * the program's start: src/init.c). A vfork child of a program that has not
 * started yet opens and writes a file of its own, and the program then
 * starts and appends as usual. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define LEN 1000
#define NBLK 300

static long kernel_size(const char *path)
{
	struct stat st;
	return syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) == 0 ? (long)st.st_size : -1;
}

static bool dormant_expected(void)
{
	const char *mode = getenv("SPLITFS_MODE");
	return t_under_splitfs() && (!mode || !*mode || strcmp(mode, "posix") == 0);
}

/* The new program: its first call into the library is this stat. */
static int check(const char *path)
{
	long before = kernel_size(path);
	if (dormant_expected())
		T_CHECK(before < (long)LEN * NBLK, "nothing put back before the first call (%ld)",
			before);
	struct stat st;
	T_REQUIRE(stat(path, &st) == 0, "stat");
	T_CHECK(st.st_size == (off_t)LEN * NBLK, "size %ld after the stat", (long)st.st_size);
	T_CHECK(t_kernel_holds_stream(path, (long)LEN * NBLK, 8),
		"the writer's bytes through the kernel");
	return t_result();
}

/* A vfork child before the program started on its root: the child opens
 * and writes through the kernel; the parent starts afterwards. */
static void vfork_before_start(const char *dir)
{
	char *mine = strdup(t_path(dir, "dormant.vfork"));
	char *child = strdup(t_path(dir, "dormant.child"));
	static const char line[] = "written by the vfork child\n";
	pid_t pid = vfork();
	if (pid == 0) {
		int fd = open(child, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		_exit(fd >= 0 && write(fd, line, sizeof(line)) == (ssize_t)sizeof(line) ? 0 : 1);
	}
	T_REQUIRE(pid > 0, "vfork");
	int status;
	T_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"the child wrote its file");
	unsigned char *got = NULL;
	T_CHECK(t_read_kernel(child, &got) == (long)sizeof(line) &&
			memcmp(got, line, sizeof(line)) == 0,
		"the child's file");
	free(got);
	int fd = open(mine, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open after the vfork");
	unsigned char buf[LEN];
	for (int b = 0; b < NBLK; b++) {
		t_fill(buf, LEN, 5, (long)b * LEN);
		T_REQUIRE(write(fd, buf, LEN) == LEN, "append");
	}
	T_CHECK(fsync(fd) == 0, "fsync");
	T_CHECK(t_kernel_holds_stream(mine, (long)LEN * NBLK, 5),
		"the parent's appends after the vfork");
	close(fd);
	unlink(mine);
	unlink(child);
	free(mine);
	free(child);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--check") == 0)
		return check(argv[2]);
	const char *dir = argc > 1 ? argv[1] : ".";
	vfork_before_start(dir);
	char *path = strdup(t_path(dir, "dormant.dat"));
	unlink(path);
	pid_t w = t_fork_writer(path, O_WRONLY, LEN, NBLK, 8, true);
	T_REQUIRE(w > 0, "writer");
	kill(w, SIGKILL);
	int status;
	waitpid(w, &status, 0);
	pid_t c = fork();
	if (c == 0) {
		execl("/proc/self/exe", argv[0], "--check", path, (char *)NULL);
		_exit(126);
	}
	T_REQUIRE(c > 0, "fork");
	T_CHECK(waitpid(c, &status, 0) == c && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"the new program's checks (status %d)", status);
	unlink(path);
	free(path);
	return t_result();
}
