/* SPDX-License-Identifier: Apache-2.0 */
/* Description: two writers of one file, one killed. Two processes open the
 * file themselves and append 64-byte records through O_APPEND, never
 * syncing; each records in shared memory how many of its write() calls
 * returned. Writer B is killed with SIGKILL at a random moment: while A
 * still writes (both have the file open), after A finished, or having
 * opened the file only after A closed it (B alone: the library leases and
 * stages). Then the
 * file, opened through the library (which puts back what B staged) and
 * read raw, must hold every acknowledged record of both, each whole and
 * once, each writer's in its order; B's write in flight may be there or
 * not. As the kernel's page cache keeps it: in every mode. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "records.h"

#define A_RECORDS 3000
#define B_RECORDS 400000 /* more than it can write before the kill */

static atomic_long *acked; /* [1], [2]: writes returned, per writer */

static void writer(const char *path, uint32_t id, long n)
{
	int fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0)
		_exit(2);
	for (long i = 0; i < n; i++) {
		struct rec r;
		rec_make(&r, id, (uint64_t)i);
		if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(3);
		atomic_store(&acked[id], i + 1);
	}
	close(fd);
	_exit(0);
}

static pid_t start(const char *path, uint32_t id, long n)
{
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0)
		writer(path, id, n);
	return pid;
}

/* Checks one view of the file (size bytes at d). */
static void check(const char *what, const unsigned char *d, long size, int round)
{
	long next[3] = {0, 0, 0}, bad = 0;
	for (long at = 0; at + (long)sizeof(struct rec) <= size; at += (long)sizeof(struct rec)) {
		struct rec r;
		memcpy(&r, d + at, sizeof(r));
		if (!rec_ok(&r) || r.writer < 1 || r.writer > 2 || (long)r.seq != next[r.writer]) {
			if (bad++ == 0)
				fprintf(stderr,
					"round %d, %s: record at %ld: ok %d writer %u seq %llu\n",
					round, what, at, rec_ok(&r), r.writer,
					(unsigned long long)r.seq);
			continue;
		}
		next[r.writer]++;
	}
	long a = atomic_load(&acked[1]), b = atomic_load(&acked[2]);
	T_CHECK(bad == 0, "round %d, %s: %ld records torn, foreign or out of order", round, what,
		bad);
	T_CHECK(size % (long)sizeof(struct rec) == 0, "round %d, %s: size %ld is not whole records",
		round, what, size);
	T_CHECK(next[1] == a && a == A_RECORDS,
		"round %d, %s: writer A: %ld records, %ld acknowledged", round, what, next[1], a);
	T_CHECK(next[2] == b || next[2] == b + 1,
		"round %d, %s: killed writer B: %ld records, %ld acknowledged", round, what,
		next[2], b);
}

static void round_of(const char *dir, int round)
{
	/* The parent makes and reads the file with raw system calls only: it
	 * holds no lease nor inode of it, so its library threads stay idle
	 * while it forks (a sanitizer's allocator is not fork-safe). */
	const char *path = t_path(dir, "twokill.dat");
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);
	syscall(SYS_close, fd);
	atomic_store(&acked[1], 0);
	atomic_store(&acked[2], 0);
	/* 0: B is killed while A writes; 1: after A is done; 2: B opens the
	 * file only after A closed it (alone from the start: it leases and
	 * stages). */
	int kind = round % 3, st, sta = 0;
	bool alone = kind > 0;
	pid_t a = start(path, 1, A_RECORDS), b = -1;
	if (kind < 2)
		b = start(path, 2, B_RECORDS);
	if (alone)
		T_REQUIRE(waitpid(a, &sta, 0) == a, "waitpid A");
	if (kind == 2)
		b = start(path, 2, B_RECORDS);
	struct timespec pause = {0, (long)(rand() % 20) * 1000000L};
	nanosleep(&pause, NULL);
	kill(b, SIGKILL);
	T_REQUIRE(waitpid(b, &st, 0) == b, "waitpid B");
	if (!alone)
		T_REQUIRE(waitpid(a, &sta, 0) == a, "waitpid A");
	T_CHECK(WIFEXITED(sta) && WEXITSTATUS(sta) == 0, "round %d: writer A status %#x", round,
		sta);

	/* Through the library first, in a child: it puts back what B had
	 * staged. */
	pid_t c = fork();
	T_REQUIRE(c >= 0, "fork");
	if (c == 0) {
		fd = open(path, O_RDONLY);
		T_REQUIRE(fd >= 0, "open %s", path);
		long size = lseek(fd, 0, SEEK_END);
		unsigned char *lib = malloc(size > 0 ? (size_t)size : 1);
		T_REQUIRE(lib && pread(fd, lib, (size_t)size, 0) == size, "read %s", path);
		close(fd);
		check("library read", lib, size, round);
		_exit(t_result());
	}
	T_REQUIRE(waitpid(c, &st, 0) == c, "waitpid checker");
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "round %d: the library's view failed (%#x)",
		round, st);
	unsigned char *raw;
	long rsize = t_read_kernel(path, &raw);
	check("raw read", raw, rsize, round);
	free(raw);
	static const char *const kinds[] = {"both writing", "B after A", "B opened after A"};
	printf("round %d (%s): A %ld, B %ld acknowledged, file %ld records\n", round, kinds[kind],
	       atomic_load(&acked[1]), atomic_load(&acked[2]), rsize / (long)sizeof(struct rec));
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc > 1, "usage: twokill DIR");
	acked = mmap(NULL, 3 * sizeof(*acked), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	T_REQUIRE(acked != MAP_FAILED, "mmap");
	srand((unsigned)getpid());
	/* Nine rounds, three of each kind (SFS_TEST_SCALE scales them). */
	for (int r = 0, n = t_scaled(9, 3); r < n; r++)
		round_of(argv[1], r);
	return t_result();
}
