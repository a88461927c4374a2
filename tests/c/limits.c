/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the kernel's limits come from the call that meets them, and
 * files stay the shape the kernel gives them (issue 13, items 3, 4, 8):
 *  - RLIMIT_FSIZE (ulimit -f): writes succeed up to the limit exactly; the
 *    one past it gets EFBIG (SIGXFSZ ignored) or ends the program with
 *    SIGXFSZ; the library's own files never meet the limit;
 *  - a full file system: the write() that needs the space fails with
 *    ENOSPC, every write that returned is in the file at exit;
 *  - sparse files: many writes past the end in one staging window leave
 *    holes, not zeros (st_blocks, SEEK_HOLE). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

extern char **environ;

#define LIMIT (1 << 20)
#define CHUNK 4096

/* A child under RLIMIT_FSIZE = LIMIT appends CHUNKs, reporting each write
 * that returned through the pipe; returns how many did and how it ended. */
static int fsize_child(const char *path, bool ignore, int *status)
{
	int p;
	pid_t c = t_fork_pipe(&p);
	if (c == 0) {
		if (ignore)
			signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {LIMIT, LIMIT};
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(3);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
		if (fd < 0)
			_exit(3);
		unsigned char buf[CHUNK];
		t_fill(buf, CHUNK, 1, 0);
		for (int i = 0; i < 2 * LIMIT / CHUNK; i++) {
			ssize_t w = write(fd, buf, CHUNK);
			if (w != CHUNK) {
				char e = w < 0 && errno == EFBIG ? 'F' : 'E';
				write(p, &e, 1);
				_exit(0);
			}
			write(p, "w", 1);
		}
		_exit(4);
	}
	int n = 0;
	char ch;
	bool efbig = false;
	while (read(p, &ch, 1) == 1) {
		if (ch == 'w')
			n++;
		else
			efbig = ch == 'F';
	}
	close(p);
	waitpid(c, status, 0);
	if (ignore)
		T_CHECK(efbig, "the write past RLIMIT_FSIZE did not fail with EFBIG");
	return n;
}

static void fsize(const char *dir)
{
	char *p = t_path(dir, "fsize.dat");
	int st;
	int n = fsize_child(p, true, &st);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d (SIGXFSZ ignored)", st);
	T_CHECK(n == LIMIT / CHUNK, "%d writes returned under the limit, want %d", n,
		LIMIT / CHUNK);
	struct stat s;
	T_CHECK(stat(p, &s) == 0 && s.st_size == LIMIT, "size %ld, want %d", (long)s.st_size,
		LIMIT);
	n = fsize_child(p, false, &st);
	T_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ, "status %d, want SIGXFSZ", st);
	T_CHECK(n == LIMIT / CHUNK, "%d writes returned before SIGXFSZ, want %d", n, LIMIT / CHUNK);
	T_CHECK(stat(p, &s) == 0 && s.st_size == LIMIT, "size %ld, want %d", (long)s.st_size,
		LIMIT);
}

/* Fills the file system but for about `room` bytes; returns the filler. */
static char *fill(const char *dir, long room)
{
	char *f = t_path(dir, "filler");
	struct statvfs v;
	T_REQUIRE(statvfs(dir, &v) == 0, "statvfs");
	long avail = (long)v.f_bavail * (long)v.f_frsize;
	int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "filler");
	if (avail > room && fallocate(fd, 0, 0, avail - room) != 0) {
		close(fd);
		unlink(f);
		return NULL;
	}
	close(fd);
	return f;
}

static void enospc(const char *dir)
{
	char *p = t_path(dir, "enospc.dat");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open");
	unsigned char buf[65536];
	t_fill(buf, sizeof(buf), 2, 0);
	T_CHECK(write(fd, buf, 100) == 100, "a first write (sync, strict: the log exists)");
	char *filler = fill(dir, 4L << 20);
	if (!filler) {
		fprintf(stderr, "cannot fill the file system: ENOSPC case skipped\n");
		close(fd);
		return;
	}
	long total = 100;
	int err = 0;
	for (int i = 0; i < 4096 && !err; i++) {
		ssize_t w = write(fd, buf, sizeof(buf));
		if (w < 0)
			err = errno;
		else
			total += w; /* a short write, then the next one fails */
	}
	T_CHECK(err == ENOSPC, "the write that met a full file system: %s, want ENOSPC",
		strerror(err));
	T_CHECK(total > 100, "nothing fit (%ld bytes)", total);
	T_CHECK(close(fd) == 0, "close after ENOSPC: %s", strerror(errno));
	struct stat s;
	T_CHECK(stat(p, &s) == 0 && s.st_size == total, "size %ld, %ld bytes were written",
		(long)s.st_size, total);
	unlink(filler);
	unlink(p);
}

/* The sparse pattern: 8 appends of CHUNK, then 20 writes past the end.
 * raw: with raw system calls (the kernel's own allocation, for reference). */
static void write_sparse(const char *p, bool raw)
{
	unsigned char buf[CHUNK];
	t_fill(buf, CHUNK, 3, 0);
	int fd = raw ? (int)syscall(SYS_openat, AT_FDCWD, p,
				    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) :
		       open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open %s", p);
	for (int i = 0; i < 28; i++) {
		off_t off = i < 8 ? (off_t)i * CHUNK : (off_t)(i - 7) * (256 << 10);
		ssize_t w = raw ? syscall(SYS_pwrite64, fd, buf, CHUNK, off) :
				  pwrite(fd, buf, CHUNK, off);
		T_CHECK(w == CHUNK, "write %d", i);
	}
	T_CHECK((raw ? syscall(SYS_close, fd) : close(fd)) == 0, "close");
}

static void sparse(const char *dir, const char *self)
{
	char *p = t_path(dir, "sparse.dat"), *ref = t_path(dir, "sparse.ref");
	/* The kernel's own, by a process without the library. */
	char *env[256];
	int k = 0;
	for (char **e = environ; *e && k < 254; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
			env[k++] = *e;
	env[k] = NULL;
	char *argv[] = {(char *)self, "--sparse-ref", ref, NULL};
	pid_t c;
	int st = -1;
	if (posix_spawn(&c, self, NULL, NULL, argv, env) == 0)
		waitpid(c, &st, 0);
	T_REQUIRE(st == 0, "the reference file");
	write_sparse(p, false);
	struct stat s, r;
	T_REQUIRE(stat(p, &s) == 0 && stat(ref, &r) == 0, "stat");
	T_CHECK(s.st_size == r.st_size, "size %ld, the kernel's %ld", (long)s.st_size,
		(long)r.st_size);
	/* The kernel allocates some of each hole too (preallocation past the
	 * end, stripe alignment): as much as it does, give or take; filled
	 * holes would be the whole file. */
	long mine = (long)s.st_blocks * 512, kernels = (long)r.st_blocks * 512;
	T_CHECK(mine <= kernels + (3L << 19),
		"%ld bytes allocated for 28 writes of %d in a %ld-byte file, the kernel %ld: the "
		"holes were filled",
		mine, CHUNK, (long)s.st_size, kernels);
	/* And the first gap is a hole where the kernel's is (written zeros
	 * are data). */
	int fd = open(p, O_RDONLY), rfd = open(ref, O_RDONLY);
	if (fd >= 0 && rfd >= 0)
		T_CHECK(lseek(fd, 8 * CHUNK, SEEK_HOLE) == lseek(rfd, 8 * CHUNK, SEEK_HOLE),
			"SEEK_HOLE after the appends: %ld, the kernel's %ld",
			(long)lseek(fd, 8 * CHUNK, SEEK_HOLE),
			(long)lseek(rfd, 8 * CHUNK, SEEK_HOLE));
	if (fd >= 0)
		close(fd);
	if (rfd >= 0)
		close(rfd);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--sparse-ref") == 0) {
		write_sparse(argv[2], true);
		return t_result();
	}
	const char *dir = argc > 1 ? argv[1] : ".";
	fsize(dir);
	sparse(dir, argv[0]);
	enospc(dir);
	return t_result();
}
