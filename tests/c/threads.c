/* SPDX-License-Identifier: Apache-2.0 */
/* Description: many threads on one file: appenders through one shared
 * O_APPEND descriptor and through their own descriptors, overwriters of a
 * fixed region, readers that check every record they see is whole, and a
 * thread that fsyncs. Nothing may crash, tear or get lost. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "records.h"

#define APPENDERS 4
#define PER_THREAD 4000
#define REGION 64 /* records overwritten in place at the start */

static const char *path;
static int shared_fd;
static atomic_int done; /* atomic: the threads poll it (a data race to TSan) */
static long reader_bad;

static void *appender(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	/* Even ids share one descriptor, odd ones open their own. */
	int fd = id % 2 ? open(path, O_WRONLY | O_APPEND) : shared_fd;
	for (uint64_t i = 0; i < PER_THREAD; i++) {
		struct rec r;
		rec_make(&r, id, i);
		if (write(fd, &r, sizeof(r)) != sizeof(r))
			__atomic_add_fetch(&reader_bad, 1000000, __ATOMIC_RELAXED);
	}
	if (id % 2)
		close(fd);
	return NULL;
}

static void *overwriter(void *arg)
{
	(void)arg;
	int fd = open(path, O_RDWR);
	for (uint64_t i = 0; !done; i++) {
		struct rec r;
		rec_make(&r, 100, i % REGION);
		pwrite(fd, &r, sizeof(r), (off_t)(i % REGION) * 64);
	}
	close(fd);
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	int fd = open(path, O_RDONLY);
	unsigned char buf[64 * 64];
	while (!done) {
		struct stat st;
		fstat(fd, &st);
		off_t off = st.st_size > (off_t)sizeof(buf) ? st.st_size - (off_t)sizeof(buf) : 0;
		off -= off % 64;
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		for (ssize_t k = 0; k + 64 <= n; k += 64)
			if (!rec_ok((struct rec *)(buf + k)))
				__atomic_add_fetch(&reader_bad, 1, __ATOMIC_RELAXED);
	}
	close(fd);
	return NULL;
}

static void *syncer(void *arg)
{
	(void)arg;
	while (!done) {
		fsync(shared_fd);
		usleep(2000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	path = t_path(dir, "threads.dat");
	unlink(path);
	shared_fd = open(path, O_RDWR | O_CREAT | O_APPEND, 0644);
	T_REQUIRE(shared_fd >= 0, "create");
	for (uint64_t i = 0; i < REGION; i++) {
		struct rec r;
		rec_make(&r, 100, i);
		T_REQUIRE(write(shared_fd, &r, sizeof(r)) == sizeof(r), "region");
	}
	pthread_t app[APPENDERS], ow, rd[2], sy;
	pthread_create(&ow, NULL, overwriter, NULL);
	pthread_create(&rd[0], NULL, reader, NULL);
	pthread_create(&rd[1], NULL, reader, NULL);
	pthread_create(&sy, NULL, syncer, NULL);
	for (uintptr_t i = 0; i < APPENDERS; i++)
		pthread_create(&app[i], NULL, appender, (void *)i);
	for (int i = 0; i < APPENDERS; i++)
		pthread_join(app[i], NULL);
	done = 1;
	pthread_join(ow, NULL);
	pthread_join(rd[0], NULL);
	pthread_join(rd[1], NULL);
	pthread_join(sy, NULL);
	T_CHECK(reader_bad == 0, "readers saw %ld torn records (or writes failed)", reader_bad);
	T_CHECK(close(shared_fd) == 0, "close");

	unsigned char *buf;
	long size = t_read_kernel(path, &buf);
	long want = (REGION + (long)APPENDERS * PER_THREAD) * 64;
	T_CHECK(size == want, "size %ld want %ld", size, want);
	static uint64_t next[APPENDERS];
	long bad = 0;
	for (long off = REGION * 64; off + 64 <= size; off += 64) {
		struct rec r;
		memcpy(&r, buf + off, 64);
		if (!rec_ok(&r) || r.writer >= APPENDERS || r.seq != next[r.writer]++)
			bad++;
	}
	for (int i = 0; i < APPENDERS; i++)
		T_CHECK(next[i] == PER_THREAD, "appender %d: %llu records", i,
			(unsigned long long)next[i]);
	T_CHECK(bad == 0, "%ld bad records", bad);
	free(buf);
	unlink(path);
	return t_result();
}
