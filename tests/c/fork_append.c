/* SPDX-License-Identifier: Apache-2.0 */
/* Description: after fork, parent and child share the offset of an
 * inherited descriptor: they take turns (over pipes) writing records
 * through it, without O_APPEND, after the parent already wrote (and the
 * library staged) some. Every record must land after the previous one. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "records.h"

#define TURNS 200

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char *path = t_path(dir, "fork.dat");
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create");
	struct rec r;
	uint64_t seq = 0;
	for (int i = 0; i < 10; i++, seq++) { /* staged before the fork */
		rec_make(&r, 0, seq);
		T_REQUIRE(write(fd, &r, sizeof(r)) == sizeof(r), "pre-fork write");
	}
	int to_child[2], to_parent[2];
	T_REQUIRE(pipe(to_child) == 0 && pipe(to_parent) == 0, "pipe");
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	int in = pid ? to_parent[0] : to_child[0];
	int out = pid ? to_child[1] : to_parent[1];
	/* Turns: the parent writes at even turns, the child at odd ones; the
	 * token carries the sequence number. */
	if (pid) {
		T_REQUIRE(write(out, &seq, sizeof(seq)) == sizeof(seq), "token");
	}
	for (int t = 0; t < TURNS; t++) {
		if (read(in, &seq, sizeof(seq)) != sizeof(seq))
			break;
		rec_make(&r, pid ? 0 : 1, seq);
		if (write(fd, &r, sizeof(r)) != sizeof(r))
			break;
		seq++;
		if (write(out, &seq, sizeof(seq)) != sizeof(seq))
			break;
	}
	if (!pid) {
		close(fd);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status");
	T_CHECK(fsync(fd) == 0, "fsync");
	long want = (long)(10 + 2 * TURNS);
	T_CHECK(lseek(fd, 0, SEEK_CUR) == want * 64, "shared offset at %ld want %ld",
		(long)lseek(fd, 0, SEEK_CUR), want * 64);
	close(fd);

	unsigned char *buf;
	long size = t_read_kernel(path, &buf);
	T_CHECK(size == want * 64, "size %ld want %ld", size, want * 64);
	for (long i = 0; i < size / 64; i++) {
		memcpy(&r, buf + i * 64, 64);
		if (!rec_ok(&r) || r.seq != (uint64_t)i) {
			T_CHECK(0, "record %ld: ok %d seq %llu", i, rec_ok(&r),
				(unsigned long long)r.seq);
			break;
		}
	}
	free(buf);
	unlink(path);
	return t_result();
}
