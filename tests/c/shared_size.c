/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the size of a file another process holds open, asked again
 * and again with lseek(SEEK_END), as PostgreSQL asks each relation's size
 * before it reads or extends it. A child holds the file open (so this
 * process cannot lease it), and a program without the library appends to
 * it now and then; this process writes and reads the file often enough to
 * be managed, then N times: lseek(fd, 0, SEEK_END) is the file's new size,
 * lseek(fd, -100, SEEK_END) and a read there return the last 100 bytes the
 * other program wrote, and an offset before the start is EINVAL, the
 * offset left where it was. Once the child has closed it, the library
 * leases the file again (its refused leases are retried less often, not
 * never): under the library the test runs itself again with statistics
 * on and checks that a lease was refused, then one taken. The strace
 * suite counts the calls: the kernel's lseeks, no stat of the file per
 * lseek.
 *   shared_size DIR [N]    default 200 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define CHUNK 8192L
#define FIRST 8L   /* chunks this process writes */
#define MORE 4096L /* what the other program appends each time */
#define EVERY 20   /* lseeks between two of its appends */

/* A child that opens path with raw system calls (no library), says so on
 * ready[1], and holds it until hold[1] closes. */
static pid_t holder(const char *path, const int ready[2], const int hold[2])
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	syscall(SYS_close, ready[0]);
	syscall(SYS_close, hold[1]);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT, 0644);
	char c = fd >= 0 ? 'y' : 'n';
	if (syscall(SYS_write, ready[1], &c, 1) != 1 || fd < 0)
		_exit(1);
	while (syscall(SYS_read, hold[0], &c, 1) > 0)
		;
	_exit(0);
}

/* Reads the file for ms milliseconds, a read a millisecond. */
static void read_for(int fd, const unsigned char *data, long size, int ms)
{
	unsigned char got[CHUNK];
	struct timespec pause = {0, 1000 * 1000};
	for (int i = 0; i < ms; i++) {
		long at = (i % (size / CHUNK)) * CHUNK;
		T_CHECK(pread(fd, got, CHUNK, at) == CHUNK && memcmp(got, data + at, CHUNK) == 0,
			"read %d after the holder left", i);
		nanosleep(&pause, NULL);
	}
}

static void run(const char *dir, int n)
{
	t_peer_start(); /* before anything is opened */
	const char *path = t_path(dir, "shared");
	int ready[2], hold[2];
	T_REQUIRE(pipe(ready) == 0 && pipe(hold) == 0, "pipes");
	pid_t child = holder(path, ready, hold);
	T_REQUIRE(child > 0, "fork");
	close(hold[0]);
	char c = 0;
	T_REQUIRE(read(ready[0], &c, 1) == 1 && c == 'y', "the holder opened %s", path);

	unsigned char *data = malloc((size_t)(FIRST * CHUNK + (n / EVERY + 1) * MORE));
	unsigned char got[CHUNK];
	T_REQUIRE(data, "malloc");
	long size = FIRST * CHUNK;
	t_fill(data, (size_t)size, 11, 0);
	int fd = open(path, O_RDWR);
	T_REQUIRE(fd >= 0, "open %s", path);
	for (long i = 0; i < FIRST; i++)
		T_CHECK(pwrite(fd, data + i * CHUNK, CHUNK, i * CHUNK) == CHUNK, "write %ld", i);
	for (long i = 0; i < 2 * FIRST; i++) /* enough operations to be managed */
		T_CHECK(pread(fd, got, CHUNK, (i % FIRST) * CHUNK) == CHUNK &&
				memcmp(got, data + (i % FIRST) * CHUNK, CHUNK) == 0,
			"read %ld", i);

	for (int i = 0; i < n; i++) {
		if (i % EVERY == 0) {
			t_fill(data + size, MORE, 11, size);
			T_CHECK(t_peer(T_PEER_RAW_APPEND, path, 0, 0, data + size, MORE, NULL, 0) ==
					MORE,
				"the other program's append %d", i);
			size += MORE;
		}
		T_CHECK(lseek(fd, 0, SEEK_END) == size, "SEEK_END %d: the size %ld", i, size);
		T_CHECK(lseek(fd, -100, SEEK_END) == size - 100, "SEEK_END - 100 (%d)", i);
		T_CHECK(read(fd, got, CHUNK) == 100 && memcmp(got, data + size - 100, 100) == 0,
			"the last 100 bytes (%d)", i);
		errno = 0;
		T_CHECK(lseek(fd, -size - 1, SEEK_END) == -1 && errno == EINVAL,
			"an offset before the start (%d): EINVAL", i);
		T_CHECK(lseek(fd, 0, SEEK_CUR) == size, "the offset after the EINVAL (%d)", i);
	}
	close(hold[1]);
	int status;
	T_CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
			WEXITSTATUS(status) == 0,
		"the holder");
	t_peer_stop();
	/* Longer than the longest wait between two tries of a lease (256 ms). */
	read_for(fd, data, size, 600);
	T_CHECK(close(fd) == 0, "close");
	T_CHECK(t_kernel_holds_stream(path, size, 11), "the kernel's file");
	free(data);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: shared_size DIR [N]");
	int n = argc > 2 ? atoi(argv[2]) : 200;
	if (!t_under_splitfs() || getenv("SHARED_SIZE_RUN")) {
		run(argv[1], n);
		return t_result();
	}
	char *stats = strdup(t_path(argv[1], "stats"));
	int st = t_run_self_stats(argv[1], "SHARED_SIZE_RUN", "1", stats);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the run failed (status %#x)", st);
	long refused = t_stat_event(stats, "lease_refused"), leases = t_stat_event(stats, "leases");
	T_CHECK(refused >= 1, "no lease refused while the child held the file (statistics in %s)",
		stats);
	T_CHECK(leases >= 1, "no lease once the child had closed the file (%ld refused; %s)",
		refused, stats);
	free(stats);
	return t_result();
}
