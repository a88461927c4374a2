/* SPDX-License-Identifier: Apache-2.0 */
/* Description: posix_spawn with file actions (interpose/spawnfa.c). A file
 * opened close-on-exec and written past its kernel writes (staged appends)
 * is dup2'ed into a spawned shell's stdout by the actions; the shell
 * appends to it through the shared open file, then the parent appends
 * again. The file must hold the parent's blocks, the shell's bytes, then
 * the parent's last block, in that order: the dup2 source was demoted
 * (relinked, its offset the kernel's) before the child started. A second
 * file, also close-on-exec and not named by the actions, is written across
 * the spawn and must read back whole. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

extern char **environ;

#define BS 4096
#define NBLK 40

static void spawn_into(int fd)
{
	posix_spawn_file_actions_t fa;
	T_REQUIRE(posix_spawn_file_actions_init(&fa) == 0, "actions init");
	T_REQUIRE(posix_spawn_file_actions_adddup2(&fa, fd, 1) == 0, "adddup2");
	char *argv[] = {"sh", "-c", "printf CHILD", NULL};
	pid_t pid;
	T_REQUIRE(posix_spawnp(&pid, "sh", &fa, NULL, argv, environ) == 0, "posix_spawnp");
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the child");
	T_CHECK(posix_spawn_file_actions_destroy(&fa) == 0, "actions destroy");
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char *p = t_path(dir, "spawn_actions.dat"), *q = t_path(dir, "spawn_other.dat");
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int other = open(q, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	T_REQUIRE(fd >= 0 && other >= 0, "open");
	static unsigned char want[NBLK * BS + 5 + BS], got[sizeof(want)], o[2 * NBLK * BS];
	t_fill(want, NBLK * BS, 1, 0);
	t_fill(o, sizeof(o), 2, 0);
	for (int i = 0; i < NBLK; i++) {
		T_REQUIRE(write(fd, want + i * BS, BS) == BS, "append %d", i);
		T_REQUIRE(write(other, o + i * BS, BS) == BS, "other append %d", i);
	}
	spawn_into(fd);
	memcpy(want + NBLK * BS, "CHILD", 5);
	t_fill(want + NBLK * BS + 5, BS, 3, 0);
	T_CHECK(write(fd, want + NBLK * BS + 5, BS) == BS, "the last append");
	for (int i = NBLK; i < 2 * NBLK; i++)
		T_CHECK(write(other, o + i * BS, BS) == BS, "other append %d", i);
	struct stat s;
	T_CHECK(fstat(fd, &s) == 0 && s.st_size == (off_t)sizeof(want), "size %ld, want %zu",
		(long)s.st_size, sizeof(want));
	T_CHECK(pread(fd, got, sizeof(got), 0) == (ssize_t)sizeof(got) &&
			memcmp(got, want, sizeof(want)) == 0,
		"the file is not the parent's blocks, the child's bytes, the parent's block");
	static unsigned char og[sizeof(o)];
	T_CHECK(pread(other, og, sizeof(og), 0) == (ssize_t)sizeof(og) &&
			memcmp(og, o, sizeof(o)) == 0,
		"the other file is not what was written");
	T_CHECK(close(fd) == 0 && close(other) == 0, "close");
	unlink(p);
	unlink(q);
	return t_result();
}
