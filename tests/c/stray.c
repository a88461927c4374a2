/* SPDX-License-Identifier: Apache-2.0 */
/* Description: stray writes (KucoFS §3.3). A wild store of the application
 * into one of the library's mappings of a file must not change the file
 * where the kernel would not have let the program write:
 *  - a file this process has open only for reading (after it wrote and
 *    closed it: the library may keep the inode) is mapped read-only;
 *  - under SPLITFS_PROTECT=1 a stray store faults even while the file is
 *    open for writing (a protection key, or read-only mappings), and the
 *    program's own writes still work.
 * The test finds the mappings in /proc/self/maps, stores into them under a
 * SIGSEGV handler, and checks the file's bytes with raw reads. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define SIZE (256 << 10)

static sigjmp_buf jump;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(jump, 1);
}

/* The mappings of path in this process: how many, and how many writable;
 * *addr gets one of them. */
static int mappings(const char *path, int *writable, char **addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	int n = 0;
	*writable = 0;
	*addr = NULL;
	while (f && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');
		if (!name)
			continue;
		name[strcspn(name, "\n")] = 0;
		if (strcmp(name, path) != 0)
			continue;
		unsigned long from;
		char perms[8];
		if (sscanf(line, "%lx-%*x %7s", &from, perms) != 2)
			continue;
		n++;
		*writable += perms[1] == 'w';
		*addr = (char *)from;
	}
	if (f)
		fclose(f);
	return n;
}

/* Stores into the first byte of each page of [addr, addr + 64 KiB) that is
 * mapped; returns how many stores did not fault. */
static int stray_stores(char *addr)
{
	struct sigaction sa = {.sa_handler = on_segv}, old_segv, old_bus;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	volatile int landed = 0;
	for (volatile int i = 0; i < 16; i++) {
		if (sigsetjmp(jump, 1) == 0) {
			((volatile char *)addr)[i * 4096] = 'S';
			landed++;
		}
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return landed;
}

static void touch(int fd)
{
	char buf[4096];
	for (int round = 0; round < 8; round++)
		for (long off = 0; off < SIZE; off += 64 << 10)
			T_REQUIRE(pread(fd, buf, sizeof(buf), off) == (ssize_t)sizeof(buf),
				  "pread");
}

/* Whether the file holds exactly want (raw reads). */
static bool file_is(const char *path, const unsigned char *want)
{
	unsigned char *got;
	long n = t_read_kernel(path, &got);
	bool same = n == SIZE && memcmp(got, want, SIZE) == 0;
	free(got);
	return same;
}

/* dir/name (its real path into path, as /proc/self/maps names it) made
 * with data, open for writing and mapped by the library's reads. */
static int make_file(const char *dir, const char *name, char *path, unsigned char *data,
		     unsigned seed)
{
	T_REQUIRE(realpath(dir, path) != NULL, "realpath");
	strcat(path, name);
	t_fill(data, SIZE, seed, 0);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0 && write(fd, data, SIZE) == SIZE, "write %s", path);
	touch(fd);
	return fd;
}

static void read_only_after_writing(const char *dir)
{
	char path[PATH_MAX];
	static unsigned char data[SIZE];
	int fd = make_file(dir, "/stray.ro", path, data, 7);
	T_REQUIRE(close(fd) == 0, "close");
	fd = open(path, O_RDONLY);
	T_REQUIRE(fd >= 0, "open O_RDONLY");
	touch(fd);
	int writable;
	char *addr;
	int n = mappings(path, &writable, &addr);
	printf("read-only open: %d mappings, %d writable\n", n, writable);
	T_CHECK(writable == 0, "%d of %d mappings of a file open only for reading are writable",
		writable, n);
	int landed = addr ? stray_stores(addr) : 0;
	T_CHECK(landed == 0, "%d stray stores into a read-only file's mapping did not fault",
		landed);
	T_CHECK(file_is(path, data), "a stray store changed a file open only for reading");
	close(fd);
}

static void protect_mode(const char *dir)
{
	char path[PATH_MAX];
	static unsigned char data[SIZE];
	int fd = make_file(dir, "/stray.rw", path, data, 9);
	/* Overwrites through the library still work (several, so that the
	 * chunk is mapped for them too). */
	for (int i = 0; i < 8; i++) {
		memset(data + 8192, 'a' + i, 100);
		T_CHECK(pwrite(fd, data + 8192, 100, 8192) == 100, "pwrite under protection");
	}
	/* The mappings may be writable when a protection key guards them
	 * (src/map/protect.h): what counts is that a stray store faults. */
	int writable;
	char *addr;
	int n = mappings(path, &writable, &addr);
	printf("SPLITFS_PROTECT=1, open for writing: %d mappings, %d writable\n", n, writable);
	int landed = addr ? stray_stores(addr) : 0;
	T_CHECK(landed == 0, "%d stray stores did not fault under SPLITFS_PROTECT=1", landed);
	unsigned char back[100];
	T_CHECK(pread(fd, back, 100, 8192) == 100 && memcmp(back, data + 8192, 100) == 0,
		"the last pwrite does not read back");
	close(fd);
	T_CHECK(file_is(path, data), "a stray store changed the file under SPLITFS_PROTECT=1");
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc > 1, "usage: stray DIR");
	if (argc > 2 && strcmp(argv[2], "protect") == 0) {
		protect_mode(argv[1]);
		return t_result();
	}
	read_only_after_writing(argv[1]);
	/* The option is read at start-up: the protected half runs in a new
	 * program. */
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		setenv("SPLITFS_PROTECT", "1", 1);
		execl("/proc/self/exe", argv[0], argv[1], "protect", (char *)NULL);
		_exit(127);
	}
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the SPLITFS_PROTECT=1 half failed (%#x)",
		st);
	return t_result();
}
