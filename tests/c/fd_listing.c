/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a process lists its own descriptors (/proc/self/fd and its
 * other names, with opendir and readdir, as Python's os.listdir does) and
 * finds what it holds, as under the kernel: not the library's own (a
 * managed file's descriptor kept after its close, .splitfs, staging
 * files). It lists them, writes a file and reads it often enough to be
 * managed, closes it, writes and reads a second file that it keeps open,
 * and lists them again by each name: the second listing is the first plus
 * the file kept open. Python's test_zipfile test_many_opens failed this
 * way. A listing by getdents64 still shows the library's (README,
 * "Limits"): the test prints how many that finds.
 *   fd_listing DIR */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

#define BLOCK 4096L
#define BLOCKS 64L
#define MAXFD 4096

/* in[fd] set for each descriptor the listing at path shows, less the
 * stream's own; the count, or -1 when it cannot be listed. */
static int list(const char *path, bool *in)
{
	memset(in, 0, MAXFD * sizeof(*in));
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd == dirfd(d) || fd < 0 || fd >= MAXFD)
			continue;
		in[fd] = true;
		n++;
	}
	closedir(d);
	return n;
}

/* A file of BLOCKS blocks written and read block by block through fd. */
static void write_and_read(int fd)
{
	unsigned char buf[BLOCK], got[BLOCK];
	for (long b = 0; b < BLOCKS; b++) {
		t_fill(buf, BLOCK, 3, b * BLOCK);
		T_CHECK(pwrite(fd, buf, BLOCK, b * BLOCK) == BLOCK, "write block %ld", b);
	}
	for (long b = 0; b < BLOCKS; b++) {
		t_fill(buf, BLOCK, 3, b * BLOCK);
		T_CHECK(pread(fd, got, BLOCK, b * BLOCK) == BLOCK && memcmp(got, buf, BLOCK) == 0,
			"read block %ld", b);
	}
}

/* The descriptors at 512 and up that getdents64 shows (informational). */
static int raw_high_fds(void)
{
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	char buf[8192] __attribute__((aligned(8)));
	int n = 0;
	long got;
	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < got;) {
			struct dirent64 *e = (struct dirent64 *)(buf + at);
			at += e->d_reclen;
			if (e->d_name[0] != '.' && atoi(e->d_name) >= 512)
				n++;
		}
	}
	close(dfd);
	return n;
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: fd_listing DIR");
	static bool before[MAXFD], after[MAXFD];
	T_REQUIRE(list("/proc/self/fd", before) > 0, "list /proc/self/fd");

	int fd = open(t_path(argv[1], "closed"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create the first file");
	write_and_read(fd);
	T_CHECK(close(fd) == 0, "close the first file");
	int kept = open(t_path(argv[1], "kept"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(kept >= 0 && kept < MAXFD, "create the second file");
	write_and_read(kept);
	printf("getdents64 shows %d descriptors at 512 and up\n", raw_high_fds());

	char pid_fd[64];
	snprintf(pid_fd, sizeof(pid_fd), "/proc/%d/fd", (int)getpid());
	const char *names[] = {"/proc/self/fd",	  "/proc/self/fd/",	  "/dev/fd",
			       "/dev/fd/",	  "/proc/thread-self/fd", pid_fd,
			       "/proc/self//fd//"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		T_CHECK(list(names[i], after) > 0, "list %s", names[i]);
		T_CHECK(after[kept], "%s shows the file kept open (%d)", names[i], kept);
		for (int f = 0; f < MAXFD; f++)
			if (f != kept)
				T_CHECK(before[f] == after[f], "%s: descriptor %d %s", names[i], f,
					after[f] ? "is new" : "is gone");
	}
	T_CHECK(close(kept) == 0, "close the second file");
	return t_result();
}
