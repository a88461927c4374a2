/* SPDX-License-Identifier: Apache-2.0 */
/* Description: two overwriters of one file, one killed. Writers A and B
 * open the file themselves and rewrite their own 4 KiB blocks (A the even
 * ones, B the odd ones) with whole-block stamps, in a loop; a reader
 * process reads every block throughout and checks that A's are never torn.
 * Under the library both writers have the file open, so neither leases it
 * and their overwrites are stores of a sharing session (src/fs/share.h),
 * each under the lock of its block in the user's table. B is killed with
 * SIGKILL at a random moment, most likely while it holds such a lock.
 * Then A, the reader, and a third writer C that takes B's blocks over must
 * go on (none may wait for B for ever: the test fails on an alarm), and the
 * file, read raw, must hold every writer's last acknowledged stamp in each
 * of its blocks; B's block in flight may hold its old stamp, its new one,
 * or (a store stops wherever the kill lands) words of both. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define BLOCK 4096
#define WORDS (BLOCK / 8)
#define BLOCKS 64

struct shared {
	atomic_int stop;
	atomic_long writes[4];		 /* per writer id: writes returned */
	_Atomic uint64_t acked[BLOCKS];	 /* the last stamp whose write returned */
	_Atomic uint64_t flying[BLOCKS]; /* a stamp whose write began */
	atomic_long reads, torn, errors;
	char example[160];
};
static struct shared *sh;

static uint64_t stamp_of(int id, long seq)
{
	return (uint64_t)id << 56 | (uint64_t)seq;
}

/* Writer id rewrites blocks b with b % 2 == parity until told to stop. */
static void writer(const char *path, int id, int parity)
{
	int fd = open(path, O_RDWR);
	if (fd < 0)
		_exit(2);
	uint64_t buf[WORDS];
	for (long seq = 1; !atomic_load(&sh->stop); seq++) {
		int b = (int)((seq * 2 + parity) % BLOCKS);
		uint64_t s = stamp_of(id, seq);
		for (int i = 0; i < WORDS; i++)
			buf[i] = s;
		atomic_store(&sh->flying[b], s);
		if (pwrite(fd, buf, BLOCK, (off_t)b * BLOCK) != BLOCK) {
			atomic_fetch_add(&sh->errors, 1);
			_exit(3);
		}
		atomic_store(&sh->acked[b], s);
		atomic_fetch_add(&sh->writes[id], 1);
	}
	close(fd);
	_exit(0);
}

/* Reads every block in turn; A's (even) blocks must be whole. */
static void reader(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		_exit(2);
	uint64_t buf[WORDS];
	for (long n = 0; !atomic_load(&sh->stop); n++) {
		int b = (int)(n % BLOCKS);
		if (pread(fd, buf, BLOCK, (off_t)b * BLOCK) != BLOCK) {
			atomic_fetch_add(&sh->errors, 1);
			continue;
		}
		atomic_fetch_add(&sh->reads, 1);
		for (int i = 1; b % 2 == 0 && i < WORDS; i++)
			if (buf[i] != buf[0]) {
				if (atomic_fetch_add(&sh->torn, 1) == 0)
					snprintf(sh->example, sizeof(sh->example),
						 "block %d: word 0 %#llx, word %d %#llx", b,
						 (unsigned long long)buf[0], i,
						 (unsigned long long)buf[i]);
				break;
			}
	}
	close(fd);
	_exit(0);
}

static const char *file;

/* A process running role (1-3: writer A, B or C; 0: the reader), killed
 * with the test if it ends first (an alarm: something waited for ever). */
static pid_t start(int role)
{
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (role == 0)
			reader(file);
		writer(file, role, role == 1 ? 0 : 1); /* A the even blocks, B and C the odd */
	}
	return pid;
}

static void hung(int sig)
{
	(void)sig;
	static const char msg[] = "twokill_over: still waiting after 120 s: a process waits "
				  "for the killed writer\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(T_EXIT_FAIL);
	_exit(T_EXIT_FAIL);
}

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
}

/* Waits until the writer id has made n more writes than at *from. */
static void wait_writes(int id, long n)
{
	long from = atomic_load(&sh->writes[id]);
	while (atomic_load(&sh->writes[id]) < from + n)
		sleep_ms(1);
}

static void round_of(const char *dir, int round)
{
	file = t_path(dir, "twokill_over.dat");
	int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	T_REQUIRE(fd >= 0, "create %s", file);
	memset(sh, 0, sizeof(*sh));
	uint64_t buf[WORDS];
	for (int b = 0; b < BLOCKS; b++) {
		for (int i = 0; i < WORDS; i++)
			buf[i] = stamp_of(0, b);
		T_REQUIRE(pwrite(fd, buf, BLOCK, (off_t)b * BLOCK) == BLOCK, "fill");
		sh->acked[b] = sh->flying[b] = stamp_of(0, b);
	}
	T_REQUIRE(close(fd) == 0, "close");

	pid_t a = start(1), b = start(2), r = start(0);
	wait_writes(1, 1000);
	wait_writes(2, 1000);
	sleep_ms(rand() % 20);
	kill(b, SIGKILL);
	int st;
	T_REQUIRE(waitpid(b, &st, 0) == b, "waitpid B");
	/* B's blocks from now on: C's. A, C and the reader must all get on. */
	pid_t c = start(3);
	wait_writes(1, 2000);
	wait_writes(3, 2000);
	long reads = atomic_load(&sh->reads);
	while (atomic_load(&sh->reads) < reads + 2 * BLOCKS)
		sleep_ms(1);
	atomic_store(&sh->stop, 1);
	pid_t rest[] = {a, c, r};
	for (int i = 0; i < 3; i++) {
		T_REQUIRE(waitpid(rest[i], &st, 0) == rest[i], "waitpid");
		T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "round %d: process %d status %#x",
			round, i, st);
	}
	T_CHECK(atomic_load(&sh->torn) == 0, "round %d: %ld of %ld reads of A's blocks torn (%s)",
		round, atomic_load(&sh->torn), atomic_load(&sh->reads), sh->example);
	T_CHECK(atomic_load(&sh->errors) == 0, "round %d: %ld failed reads or writes", round,
		atomic_load(&sh->errors));

	unsigned char *data;
	long n = t_read_kernel(file, &data);
	T_REQUIRE(n == (long)BLOCKS * BLOCK, "round %d: size %ld", round, n);
	int wrong = 0;
	for (int k = 0; k < BLOCKS; k++) {
		uint64_t want = atomic_load(&sh->acked[k]), fly = atomic_load(&sh->flying[k]);
		for (int i = 0; i < WORDS; i++) {
			uint64_t w;
			memcpy(&w, data + (long)k * BLOCK + i * 8, 8);
			if (w != want && w != fly && wrong++ == 0)
				fprintf(stderr,
					"round %d: block %d word %d: %#llx, acknowledged %#llx, "
					"in flight %#llx\n",
					round, k, i, (unsigned long long)w,
					(unsigned long long)want, (unsigned long long)fly);
		}
	}
	T_CHECK(wrong == 0,
		"round %d: %d words hold neither the last acknowledged write nor the "
		"one in flight",
		round, wrong);
	free(data);
	printf("round %d: A %ld, B %ld (killed), C %ld writes; %ld reads\n", round,
	       atomic_load(&sh->writes[1]), atomic_load(&sh->writes[2]),
	       atomic_load(&sh->writes[3]), atomic_load(&sh->reads));
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc > 1, "usage: twokill_over DIR");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_REQUIRE(sh != MAP_FAILED, "mmap");
	srand((unsigned)getpid());
	/* Nobody may wait for the killed writer for ever. */
	signal(SIGALRM, hung);
	alarm(120);
	for (int r = 0, n = t_scaled(6, 2); r < n; r++) /* SFS_TEST_SCALE scales them */
		round_of(argv[1], r);
	return t_result();
}
