/* SPDX-License-Identifier: Apache-2.0 */
/* Description: closing any descriptor of a file drops every POSIX record
 * lock the process holds on it, so the library must never close one of its
 * own while the application holds locks. The application takes a lock
 * through a read-only descriptor, then opens the file for writing (the
 * library's descriptor goes from read-only to read-write), writes, and
 * closes a writable descriptor; a child checks with F_GETLK after each step
 * that the lock is still there. SQLite depends on this. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

extern char **environ;
static const char *self;

/* The checker process: exit 1 if byte 100 is locked by someone, 0 if not. */
static int check(const char *path)
{
	int fd = open(path, O_RDWR);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 100, .l_len = 1};
	if (fd < 0 || fcntl(fd, F_GETLK, &fl) != 0)
		return 2;
	return fl.l_type == F_UNLCK ? 0 : 1;
}

/* 1 if another process sees a lock on byte 100, 0 if not, -1 on error. The
 * checker is spawned (not forked: a fork shares every descriptor, which
 * makes the library leave them all to the kernel, and the test would no
 * longer exercise the library's own descriptor). */
static int locked_by_parent(const char *path)
{
	pid_t pid;
	char *args[] = {(char *)self, "--check", (char *)path, NULL};
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) != 0)
		return -1;
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) > 1)
		return -1;
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc == 3 && strcmp(argv[1], "--check") == 0)
		return check(argv[2]);
	const char *dir = argc > 1 ? argv[1] : ".";
	char *p = t_path(dir, "locks.dat");
	unlink(p);
	int w = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(w >= 0 && write(w, "0123456789", 10) == 10, "create");
	close(w);

	/* O_CLOEXEC: the spawned checker must not inherit them. */
	int r = open(p, O_RDONLY | O_CLOEXEC);
	T_REQUIRE(r >= 0, "open read-only");
	char b[4];
	T_CHECK(pread(r, b, 4, 0) == 4, "read");
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 100, .l_len = 1};
	T_REQUIRE(fcntl(r, F_SETLK, &fl) == 0, "lock");
	T_CHECK(locked_by_parent(p) == 1, "lock held after taking it");

	w = open(p, O_RDWR | O_CLOEXEC);
	T_REQUIRE(w >= 0, "open for writing");
	T_CHECK(locked_by_parent(p) == 1, "lock held after opening for writing");
	T_CHECK(pwrite(w, "abcdef", 6, 8) == 6, "write");
	T_CHECK(fsync(w) == 0, "fsync");
	T_CHECK(locked_by_parent(p) == 1, "lock held after writing");

	/* The application's own close drops its locks, as in the kernel. */
	close(w);
	T_CHECK(locked_by_parent(p) == 0, "the application's close dropped the lock");
	close(r);
	unlink(p);
	return t_result();
}
