/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a descriptor passed to another process over a unix socket
 * (SCM_RIGHTS) shares its open file with that process, as a forked child's
 * does. The parent appends records through an O_APPEND descriptor, passes
 * it to a child (forked before the file existed), which appends its own
 * records through it; then the parent appends more. The file must hold
 * every record whole, in that order, as on the kernel. Also: passing a
 * descriptor the application never opened fails with EBADF. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "records.h"

#define BATCH 100

/* sendmsg's result for one descriptor in SCM_RIGHTS. */
static ssize_t send_fd(int sock, int fd)
{
	char data = 'F';
	struct iovec iov = {&data, 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0);
}

static int recv_fd(int sock)
{
	char data;
	struct iovec iov = {&data, 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int fd = -1;
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static void append(int fd, uint32_t writer, uint64_t from)
{
	for (uint64_t i = from; i < from + BATCH; i++) {
		struct rec r;
		rec_make(&r, writer, i);
		T_REQUIRE(write(fd, &r, sizeof(r)) == sizeof(r), "append %u/%llu", writer,
			  (unsigned long long)i);
	}
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc > 1, "usage: passfd DIR");
	const char *path = t_path(argv[1], "passfd.dat");
	int sv[2];
	T_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		close(sv[0]);
		int fd = recv_fd(sv[1]);
		if (fd < 0)
			_exit(2);
		append(fd, 2, 0);
		close(fd);
		char done = 'D';
		_exit(write(sv[1], &done, 1) == 1 ? t_result() : 3);
	}
	close(sv[1]);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	T_REQUIRE(fd >= 0, "open %s", path);
	append(fd, 1, 0);
	T_REQUIRE(send_fd(sv[0], fd) == 1, "sendmsg");
	char done;
	T_REQUIRE(read(sv[0], &done, 1) == 1, "the child did not finish");
	append(fd, 1, BATCH);
	T_REQUIRE(close(fd) == 0, "close");
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);

	/* Passing a descriptor the application does not have open. */
	int closed = dup(2);
	close(closed);
	errno = 0;
	T_CHECK(send_fd(sv[0], closed) == -1 && errno == EBADF,
		"passing a closed descriptor: want EBADF");
	close(sv[0]);

	unsigned char *buf;
	long n = t_read_kernel(path, &buf);
	T_CHECK(n == 3 * BATCH * (long)sizeof(struct rec), "size %ld, want %ld", n,
		3 * BATCH * (long)sizeof(struct rec));
	long bad = 0;
	for (long i = 0; i < n / (long)sizeof(struct rec); i++) {
		struct rec r;
		memcpy(&r, buf + i * (long)sizeof(r), sizeof(r));
		uint32_t writer = i < BATCH ? 1 : i < 2 * BATCH ? 2 : 1;
		uint64_t seq = (uint64_t)(i < BATCH ? i : i < 2 * BATCH ? i - BATCH : i - BATCH);
		if (!rec_ok(&r) || r.writer != writer || r.seq != seq) {
			if (bad++ == 0)
				fprintf(stderr,
					"record %ld: writer %u seq %llu ok %d, want writer %u "
					"seq %llu\n",
					i, r.writer, (unsigned long long)r.seq, rec_ok(&r), writer,
					(unsigned long long)seq);
		}
	}
	T_CHECK(bad == 0, "%ld of %ld records are wrong or out of place", bad,
		n / (long)sizeof(struct rec));
	free(buf);
	return t_result();
}
