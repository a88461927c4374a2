/* SPDX-License-Identifier: Apache-2.0 */
/* Description: FxMark's data workloads (Min et al., ATC'16), in 4 KiB
 * operations, by N threads of one process or N processes:
 *   DRBL  each worker reads its own file (low sharing)
 *   DRBM  each worker reads its own blocks of one shared file (medium)
 *   DWOL  each worker overwrites its own file
 *   DWOM  each worker overwrites its own blocks of one shared file
 *   DWAL  each worker appends to its own file
 *   DOCL  each worker opens its own file read-only, reads 4 KiB of it and
 *         closes it, per operation: a server of small files (not one of
 *         FxMark's: its MRPL opens and closes without reading)
 * Each worker cycles through its 1 MiB region (appenders start over from
 * an empty file every 64 MiB). Processes open the files themselves after
 * the fork, as separate programs would; readers open read-only
 * (FXMARK_RDWR=1: read-write); FXMARK_DSYNC=1 opens every file O_DSYNC
 * (each write durable on return: compare the kernel with the library's sync
 * mode). Prints one JSON line: the total operations per second of all
 * workers.
 *   fxmark DIR WORKLOAD WORKERS threads|procs SECONDS */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OP 4096
#define REGION (1 << 20)
#define APPEND_MAX (64 << 20)
#define MAXW 64

enum kind { DRBL, DRBM, DWOL, DWOM, DWAL, DOCL, NKINDS };
static const char *names[NKINDS] = {"DRBL", "DRBM", "DWOL", "DWOM", "DWAL", "DOCL"};

struct shared {
	atomic_int ready, go, stop;
	atomic_long ops[MAXW];
};

static struct shared *sh;
static enum kind kind;
static const char *dir;
static int workers;

static bool shared_file(void)
{
	return kind == DRBM || kind == DWOM;
}

static void file_name(char *buf, size_t n, int w)
{
	if (shared_file())
		snprintf(buf, n, "%s/fx.shared", dir);
	else
		snprintf(buf, n, "%s/fx.%d", dir, w);
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* The files, full of data, before any worker starts. */
static void prepare(void)
{
	static char block[OP];
	memset(block, 'x', OP);
	for (int w = 0; w < (shared_file() ? 1 : workers); w++) {
		char path[512];
		file_name(path, sizeof(path), w);
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die("open");
		long size = kind == DWAL ? 0 : (long)REGION * (shared_file() ? workers : 1);
		for (long off = 0; off < size; off += OP)
			if (pwrite(fd, block, OP, off) != OP)
				die("pwrite");
		if (fsync(fd) != 0)
			die("fsync");
		close(fd);
	}
}

static void work(int w)
{
	char path[512], block[OP];
	memset(block, 'a' + w % 26, OP);
	file_name(path, sizeof(path), w);
	/* Readers open read-only, as a reader does: processes that share a
	 * file then each hold a read lease (src/fs/lease.h). FXMARK_RDWR=1
	 * opens readers O_RDWR (a writable open shares no lease: the kernel
	 * path for every process of a shared file). */
	bool reads = kind == DRBL || kind == DRBM || kind == DOCL;
	const char *rdwr = getenv("FXMARK_RDWR");
	int acc = reads && !(rdwr && atoi(rdwr)) ? O_RDONLY : O_RDWR;
	const char *dsync = getenv("FXMARK_DSYNC");
	if (dsync && atoi(dsync))
		acc |= O_DSYNC;
	int fd = open(path, (kind == DWAL ? O_WRONLY | O_APPEND : acc) | (acc & O_DSYNC));
	if (fd < 0)
		die("open");
	long base = shared_file() ? (long)w * REGION : 0, at = 0, ops = 0, appended = 0;
	atomic_fetch_add(&sh->ready, 1);
	while (!atomic_load(&sh->go))
		;
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		ssize_t r;
		switch (kind) {
		case DRBL:
		case DRBM:
			r = pread(fd, block, OP, base + at);
			break;
		case DWOL:
		case DWOM:
			r = pwrite(fd, block, OP, base + at);
			break;
		case DOCL:
			/* The open of the loop's first operation is the one above. */
			if (ops > 0 && (fd = open(path, acc)) < 0)
				die("open");
			r = pread(fd, block, OP, base + at);
			if (close(fd) != 0)
				die("close");
			fd = -1;
			break;
		default:
			if (appended >= APPEND_MAX) {
				if (ftruncate(fd, 0) != 0)
					die("ftruncate");
				appended = 0;
			}
			r = write(fd, block, OP);
			appended += OP;
			break;
		}
		if (r != OP)
			die("io");
		at = (at + OP) % REGION;
		ops++;
	}
	atomic_store(&sh->ops[w], ops);
	if (fd >= 0)
		close(fd);
}

static void *thread_main(void *arg)
{
	work((int)(intptr_t)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr,
			"usage: fxmark DIR DRBL|DRBM|DWOL|DWOM|DWAL|DOCL WORKERS threads|procs "
			"SECONDS\n");
		return 2;
	}
	dir = argv[1];
	kind = (enum kind)(-1);
	for (int i = 0; i < NKINDS; i++)
		if (strcmp(argv[2], names[i]) == 0)
			kind = (enum kind)i;
	workers = atoi(argv[3]);
	bool procs = strcmp(argv[4], "procs") == 0;
	double seconds = atof(argv[5]);
	if ((int)kind < 0 || workers < 1 || workers > MAXW || seconds <= 0) {
		fprintf(stderr, "fxmark: bad arguments\n");
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap");
	prepare();
	pthread_t t[MAXW];
	pid_t pid[MAXW];
	for (int w = 0; w < workers; w++) {
		if (!procs) {
			if (pthread_create(&t[w], NULL, thread_main, (void *)(intptr_t)w) != 0)
				die("pthread_create");
		} else if ((pid[w] = fork()) == 0) {
			work(w);
			_exit(0);
		} else if (pid[w] < 0) {
			die("fork");
		}
	}
	while (atomic_load(&sh->ready) < workers)
		usleep(1000);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store(&sh->go, 1);
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&sh->stop, 1);
	for (int w = 0; w < workers; w++) {
		if (!procs) {
			pthread_join(t[w], NULL);
		} else {
			int st;
			if (waitpid(pid[w], &st, 0) != pid[w] || !WIFEXITED(st) || WEXITSTATUS(st))
				return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	long total = 0;
	for (int w = 0; w < workers; w++)
		total += atomic_load(&sh->ops[w]);
	printf("{\"metric\":\"%s_%s%d\",\"value\":%.0f,\"unit\":\"ops/s\",\"better\":\"higher\"}\n",
	       names[kind], procs ? "p" : "t", workers, (double)total / secs);
	return 0;
}
