/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the data path of the strace suite: on one file, 10,000 4 KiB
 * preads, then 10,000 4 KiB overwrites (pwrite), then 10,000 4 KiB appends
 * (write at the end), no fsync in between; every read is checked, and at the
 * end the whole file is checked through the library and, after close (which
 * relinks the appends), with the raw kernel read. Under SplitFS the three
 * phases should make (almost) no read/write system calls; tests/suites/
 * strace.sh counts them. Prints one line per phase (ns per operation) and
 * whether the library is loaded. DATAPATH_SYNC=1 syncs each overwrite.
 * DATAPATH_FORK=1 forks before the overwrites, a child that exits at once
 * (a shell's subshell, a system()-style helper): the parent's descriptor
 * must come back to the library once the child is gone. DATAPATH_SPAWN=1
 * opens the file close-on-exec and spawns a program (posix_spawn) while its
 * descriptor is still pending (fs/fdtable.h): the child never has it, and
 * the library must still take the file over. DATAPATH_SPAWN=2 spawns it
 * with file actions that dup2 stderr to the child's stdout (as Rust's
 * Command and make do), and again after the preads, when the file is
 * managed: it must stay managed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

extern char **environ;

#define BS 4096
#define BASE_BLOCKS 1024 /* the file starts at 4 MiB; the ops cycle over it */
#define BASE (BASE_BLOCKS * BS)
/* Operations per phase: 10,000, or DATAPATH_OPS (the lab's emulated CPU). */
static long NOPS = 10000;
#define TOTAL ((long)BASE + NOPS * BS)

static unsigned char *want; /* the model of the file, TOTAL bytes */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A whole-buffer write or read at an offset, looping on short transfers. */
static bool pwrite_all(int fd, const unsigned char *b, size_t n, off_t off)
{
	while (n > 0) {
		ssize_t r = pwrite(fd, b, n, off);
		if (r <= 0)
			return false;
		b += r;
		n -= (size_t)r;
		off += r;
	}
	return true;
}

static long pread_all(int fd, unsigned char *b, size_t n, off_t off)
{
	long got = 0;
	while ((size_t)got < n) {
		ssize_t r = pread(fd, b + got, n - (size_t)got, off + got);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += r;
	}
	return got;
}

/* Runs /bin/true with posix_spawn, with file actions (stderr as its
 * stdout) or none. */
static void spawn_true(bool actions)
{
	posix_spawn_file_actions_t fa;
	if (actions) {
		T_REQUIRE(posix_spawn_file_actions_init(&fa) == 0, "actions");
		T_REQUIRE(posix_spawn_file_actions_adddup2(&fa, 2, 1) == 0, "adddup2");
	}
	char *args[] = {"true", NULL};
	pid_t pid;
	int st;
	T_REQUIRE(posix_spawn(&pid, "/bin/true", actions ? &fa : NULL, NULL, args, environ) == 0,
		  "posix_spawn");
	T_REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the spawned program");
	if (actions)
		posix_spawn_file_actions_destroy(&fa);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	if (getenv("DATAPATH_OPS"))
		NOPS = atol(getenv("DATAPATH_OPS"));
	T_REQUIRE(NOPS > 0, "DATAPATH_OPS must be positive");
	/* DATAPATH_SYNC=1: every overwrite is followed by fdatasync or fsync
	 * (alternately): durable overwrites, as a database commits pages. */
	bool sync_each = getenv("DATAPATH_SYNC") && atoi(getenv("DATAPATH_SYNC")) != 0;
	char *p = t_path(dir, "datapath.dat");
	printf("datapath: library %s\n", t_under_splitfs() ? "loaded" : "not loaded");
	want = malloc(TOTAL);
	unsigned char *got = malloc(TOTAL);
	T_REQUIRE(want && got, "malloc");

	/* Setup (a handful of calls): a 4 MiB file, made durable. */
	unlink(p);
	int spawn = getenv("DATAPATH_SPAWN") ? atoi(getenv("DATAPATH_SPAWN")) : 0;
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC | (spawn ? O_CLOEXEC : 0), 0644);
	T_REQUIRE(fd >= 0, "open %s", p);
	t_fill(want, BASE, 1, 0);
	T_REQUIRE(pwrite_all(fd, want, BASE, 0), "initial write");
	T_REQUIRE(fsync(fd) == 0, "fsync");
	if (spawn)
		spawn_true(spawn == 2);

	/* 1: preads of 4 KiB blocks in a scattered order, each checked. */
	unsigned char buf[BS];
	int bad = 0;
	double t0 = now_ns();
	for (long i = 0; i < NOPS; i++) {
		long off = (i * 7919 % BASE_BLOCKS) * BS;
		ssize_t r = pread(fd, buf, BS, off);
		if (r != BS || memcmp(buf, want + off, BS) != 0)
			bad++;
	}
	double t1 = now_ns();
	T_CHECK(bad == 0, "%d of %ld preads short or wrong", bad, NOPS);
	if (spawn == 2)
		spawn_true(true); /* the file is managed now */

	if (getenv("DATAPATH_FORK") && atoi(getenv("DATAPATH_FORK")) != 0) {
		pid_t pid = fork();
		T_REQUIRE(pid >= 0, "fork");
		if (pid == 0)
			_exit(0);
		int st;
		T_REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "the child");
	}

	/* 2: overwrites of 4 KiB blocks, new content each time (made before
	 * the clock starts). */
	bad = 0;
	t_fill(got, (size_t)NOPS * BS, 2, 0);
	double t1b = now_ns();
	for (long i = 0; i < NOPS; i++) {
		long off = (i * 389 % BASE_BLOCKS) * BS;
		memcpy(want + off, got + i * BS, BS);
		if (pwrite(fd, want + off, BS, off) != BS)
			bad++;
		if (sync_each && ((i & 1) ? fsync(fd) : fdatasync(fd)) != 0)
			bad++;
	}
	double t2 = now_ns();
	T_CHECK(bad == 0, "%d of %ld overwrites failed", bad, NOPS);

	/* 3: appends with write() at the end of the file. */
	bad = 0;
	T_CHECK(lseek(fd, 0, SEEK_END) == BASE, "lseek SEEK_END");
	t_fill(want + BASE, (size_t)NOPS * BS, 3, BASE);
	double t2b = now_ns();
	for (long i = 0; i < NOPS; i++)
		if (write(fd, want + BASE + i * BS, BS) != BS)
			bad++;
	double t3 = now_ns();
	T_CHECK(bad == 0, "%d of %ld appends failed", bad, NOPS);
	printf("datapath: %ld preads %.0f ns/op, %ld overwrites%s %.0f ns/op, %ld appends %.0f ns/op\n",
	       NOPS, (t1 - t0) / NOPS, NOPS, sync_each ? "+fsync" : "", (t2 - t1b) / NOPS, NOPS,
	       (t3 - t2b) / NOPS);

	/* The whole file through the descriptor (staged appends included). */
	struct stat st;
	T_CHECK(fstat(fd, &st) == 0 && st.st_size == TOTAL, "fstat size %ld want %ld",
		(long)st.st_size, TOTAL);
	memset(got, 0, TOTAL);
	T_CHECK(pread_all(fd, got, TOTAL, 0) == TOTAL && memcmp(got, want, TOTAL) == 0,
		"content through the descriptor");
	T_CHECK(close(fd) == 0, "close");

	/* After close the kernel file holds every byte. */
	unsigned char *k = NULL;
	long ks = t_read_kernel(p, &k);
	T_CHECK(ks == TOTAL && k && memcmp(k, want, TOTAL) == 0, "kernel view after close (%ld)",
		ks);
	free(k);
	free(got);
	free(want);
	unlink(p);
	return t_result();
}
