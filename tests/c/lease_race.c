/* SPDX-License-Identifier: Apache-2.0 */
/* Description: an open by another process sees every byte a writer had
 * written before it, even when the open breaks a lease the writer is still
 * taking. A writer process keeps the file open and appends small records
 * (under the library: staged, while it holds a write lease); a reader
 * process opens the file read-only every few hundred microseconds, which
 * breaks that lease each time (the library takes it again a few appends
 * later), and checks that the file holds at least the bytes the writer had
 * acknowledged before that open began. A break the holder does not hear
 * of leaves the open waiting until the kernel takes the lease back
 * (/proc/sys/fs/lease-break-time, set to 2 s while the test runs where it
 * can be), and the holder then goes on staging: every later open misses
 * its appends. The writer runs on one CPU, so that its service thread,
 * woken by a break, runs at once in place of the thread taking the lease.
 * Knobs: LEASE_RACE_SECONDS (default 3), LEASE_RACE_PAUSE_US (the reader's
 * pauses are up to this long, default 200). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define RECORD 16
#define MAX_SIZE (64L << 20) /* the writer stops here */

struct shared {
	atomic_int stop;
	atomic_long acked; /* the file's size after the writer's last append */
	atomic_long appends;
	atomic_long opens;
	atomic_long short_opens;
	atomic_long errors;
	long first_size, first_acked;
};

static struct shared *sh;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One open for the whole run, as a log writer's: after each break the
 * library takes the lease again (LEASE_AFTER appends later). */
static void writer(const char *path)
{
	char rec[RECORD];
	long size = 0;
	int fd = open(path, O_RDWR);
	if (fd < 0) {
		atomic_fetch_add(&sh->errors, 1);
		atomic_store(&sh->stop, 1);
		return;
	}
	while (!atomic_load(&sh->stop) && size < MAX_SIZE) {
		memset(rec, 'a' + (int)(size / RECORD % 26), sizeof(rec));
		if (pwrite(fd, rec, RECORD, size) != RECORD) {
			atomic_fetch_add(&sh->errors, 1);
			break;
		}
		size += RECORD;
		atomic_store(&sh->acked, size);
		/* A pause now and then: a log's pace, and a bounded file. */
		if (atomic_fetch_add(&sh->appends, 1) % 16 == 15)
			nanosleep(&(struct timespec){0, 50 * 1000}, NULL);
	}
	close(fd);
	atomic_store(&sh->stop, 1);
}

static void reader(const char *path, double seconds)
{
	double end = now() + seconds;
	const char *p = getenv("LEASE_RACE_PAUSE_US");
	long pause_us = p ? atol(p) : 200;
	for (long n = 0; !atomic_load(&sh->stop) && now() < end; n++) {
		if (pause_us) {
			long us = n * 7919 % pause_us;
			struct timespec ts = {us / 1000000, us % 1000000 * 1000};
			nanosleep(&ts, NULL);
		}
		long acked = atomic_load(&sh->acked);
		int fd = open(path, O_RDONLY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) != 0) {
			atomic_fetch_add(&sh->errors, 1);
			if (fd >= 0)
				close(fd);
			continue;
		}
		close(fd);
		atomic_fetch_add(&sh->opens, 1);
		if (st.st_size < acked && atomic_fetch_add(&sh->short_opens, 1) == 0) {
			sh->first_size = (long)st.st_size;
			sh->first_acked = acked;
		}
	}
	atomic_store(&sh->stop, 1);
}

/* A break the holder misses costs lease-break-time (45 s by default):
 * 2 s while the test runs, where it may change it (not 1: a holder that
 * hears the break must have time to let go, in the lab's emulated guest
 * and under ThreadSanitizer too). */
static const char *const knob = "/proc/sys/fs/lease-break-time";
static char old_break[32];

static void shorten_break(void)
{
	int fd = open(knob, O_RDWR);
	if (fd < 0)
		return;
	ssize_t n = read(fd, old_break, sizeof(old_break) - 1);
	old_break[n > 0 ? n : 0] = '\0';
	if (n <= 0 || pwrite(fd, "2\n", 2, 0) != 2)
		old_break[0] = '\0';
	close(fd);
}

static void restore_break(void)
{
	if (!old_break[0])
		return;
	int fd = open(knob, O_WRONLY);
	if (fd >= 0) {
		T_CHECK(write(fd, old_break, strlen(old_break)) == (ssize_t)strlen(old_break),
			"restore %s", knob);
		close(fd);
	}
}

/* The writer (all its threads) on one CPU, the reader on another: the
 * writer's service thread, woken by a break, then runs at once in place
 * of the thread that is still taking the lease, which is the moment a
 * break used to be missed. */
static void pin(int i)
{
	cpu_set_t all, one;
	if (sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2)
		return;
	int want = i, seen = 0;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all) || seen++ != want)
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		sched_setaffinity(0, sizeof(one), &one);
		return;
	}
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc > 1, "usage: lease_race DIR");
	const char *s = getenv("LEASE_RACE_SECONDS");
	double seconds = s ? atof(s) : 3;
	const char *path = t_path(argv[1], "lease_race");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);
	close(fd);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_REQUIRE(sh != MAP_FAILED, "mmap");
	shorten_break();
	pid_t pid[2];
	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		T_REQUIRE(pid[i] >= 0, "fork");
		if (pid[i] == 0) {
			pin(i);
			if (i == 0)
				writer(path);
			else
				reader(path, seconds);
			_exit(0);
		}
	}
	for (int i = 0; i < 2; i++) {
		int st;
		T_CHECK(waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			"process %d ended with status %#x", i, st);
	}
	restore_break();
	long opens = atomic_load(&sh->opens), short_opens = atomic_load(&sh->short_opens);
	printf("%ld appends, %ld reader opens, %ld short, %ld errors\n",
	       (long)atomic_load(&sh->appends), opens, short_opens, (long)atomic_load(&sh->errors));
	T_CHECK(short_opens == 0,
		"%ld of %ld opens missed acknowledged appends (first: size %ld, %ld acknowledged)",
		short_opens, opens, sh->first_size, sh->first_acked);
	T_CHECK(atomic_load(&sh->errors) == 0, "%ld failed opens or writes",
		(long)atomic_load(&sh->errors));
	T_CHECK(opens > 0 && atomic_load(&sh->appends) > 0, "nothing ran");
	return t_result();
}
