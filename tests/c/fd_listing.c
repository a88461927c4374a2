/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a process lists its own descriptors (/proc/self/fd and its
 * other names, with opendir and readdir, as Python's os.listdir does) and
 * finds what it holds, as under the kernel: not the library's own (a
 * managed file's descriptor kept after its close, .splitfs, staging
 * files). It lists them, writes a file and reads it often enough to be
 * managed, closes it, writes and reads a second file that it keeps open,
 * and lists them again by each name: the second listing is the first plus
 * the file kept open. Python's test_zipfile test_many_opens failed this
 * way. The same again for a listing of a descriptor opened by such a name:
 * through fdopendir and readdir (as fts and find list), the same of a dup
 * of it (as Python's os.listdir(fd) lists), through glibc's getdents64,
 * and through syscall(SYS_getdents64), all of which showed the library's
 * descriptors before.
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

/* How a listing is made. */
enum how { BY_OPENDIR, BY_FDOPENDIR, BY_DUP_FDOPENDIR, BY_GETDENTS, BY_SYSCALL, NHOW };
static const char *const how_name[NHOW] = {"opendir", "fdopendir", "fdopendir of a dup",
					   "getdents64", "syscall(SYS_getdents64)"};

/* Counts an entry name into in[], less the listing's own descriptor. */
static int count(const char *name, int self, bool *in)
{
	int fd = atoi(name);
	if (name[0] == '.' || fd == self || fd < 0 || fd >= MAXFD)
		return 0;
	in[fd] = true;
	return 1;
}

/* in[fd] set for each descriptor the listing at path made the way how
 * shows, less the listing's own; the count, or -1 when it cannot be
 * listed. The getdents64 buffer is small, so that a listing takes several
 * reads. */
static int list(const char *path, enum how how, bool *in)
{
	memset(in, 0, MAXFD * sizeof(*in));
	int n = 0;
	if (how == BY_OPENDIR || how == BY_FDOPENDIR || how == BY_DUP_FDOPENDIR) {
		DIR *d = NULL;
		if (how == BY_OPENDIR)
			d = opendir(path);
		else {
			/* Python's os.listdir(fd) lists a dup of fd. */
			int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (how == BY_DUP_FDOPENDIR && dfd >= 0) {
				int copy = dup(dfd);
				close(dfd);
				dfd = copy;
			}
			if (dfd >= 0 && !(d = fdopendir(dfd)))
				close(dfd);
		}
		if (!d)
			return -1;
		for (struct dirent *e; (e = readdir(d));)
			n += count(e->d_name, dirfd(d), in);
		closedir(d);
		return n;
	}
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	char buf[256] __attribute__((aligned(8)));
	long got;
	while ((got = how == BY_GETDENTS ? (long)getdents64(dfd, buf, sizeof(buf)) :
					   syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < got;) {
			struct dirent64 *e = (struct dirent64 *)(buf + at);
			at += e->d_reclen;
			n += count(e->d_name, dfd, in);
		}
	}
	close(dfd);
	return got < 0 ? -1 : n;
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

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: fd_listing DIR");
	static bool before[MAXFD], after[MAXFD];
	T_REQUIRE(list("/proc/self/fd", BY_OPENDIR, before) > 0, "list /proc/self/fd");

	int fd = open(t_path(argv[1], "closed"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create the first file");
	write_and_read(fd);
	T_CHECK(close(fd) == 0, "close the first file");
	int kept = open(t_path(argv[1], "kept"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(kept >= 0 && kept < MAXFD, "create the second file");
	write_and_read(kept);

	char pid_fd[64];
	snprintf(pid_fd, sizeof(pid_fd), "/proc/%d/fd", (int)getpid());
	const char *names[] = {"/proc/self/fd",	  "/proc/self/fd/",	  "/dev/fd",
			       "/dev/fd/",	  "/proc/thread-self/fd", pid_fd,
			       "/proc/self//fd//"};
	for (int how = 0; how < NHOW; how++) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			const char *by = how_name[how];
			T_CHECK(list(names[i], (enum how)how, after) > 0, "list %s by %s", names[i],
				by);
			T_CHECK(after[kept], "%s by %s shows the file kept open (%d)", names[i], by,
				kept);
			for (int f = 0; f < MAXFD; f++)
				if (f != kept)
					T_CHECK(before[f] == after[f], "%s by %s: descriptor %d %s",
						names[i], by, f, after[f] ? "is new" : "is gone");
		}
	}
	T_CHECK(close(kept) == 0, "close the second file");
	return t_result();
}
