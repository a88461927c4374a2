/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a write-only descriptor, used by two threads. One writes
 * until the library leases the file, which makes its own descriptor of the
 * file readable by swapping it for a new one; the other meanwhile asks for
 * the file's data and holes (lseek SEEK_DATA/SEEK_HOLE) and makes
 * RWF_DSYNC writes, both of which the library serves through that
 * descriptor. Every answer must be the kernel's; under ThreadSanitizer
 * (the tsan suite) no access to the descriptor may race with the swap. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/uio.h>
#include <unistd.h>

#include "helpers.h"

#define FILES 40
#define BLOCK 4096
#define WRITES 64 /* blocks the main thread writes per file: the lease comes after 16 */

static int fd;
static atomic_int done;
static atomic_long rounds; /* of the seeker, in all */
static atomic_long bad_seek, bad_write, bad_data;

static void *seeker(void *arg)
{
	(void)arg;
	char block[BLOCK];
	memset(block, 's', sizeof(block));
	for (long i = 0; !atomic_load(&done); i++) {
		/* Block 0 was written before the threads started: data at 0, and
		 * the first hole at or after the end of block 0. */
		off_t d = lseek(fd, 0, SEEK_DATA);
		off_t h = lseek(fd, 0, SEEK_HOLE);
		if (d != 0 || h < BLOCK) {
			if (atomic_fetch_add(&bad_seek, 1) == 0)
				fprintf(stderr, "SEEK_DATA %lld SEEK_HOLE %lld (errno %d)\n",
					(long long)d, (long long)h, errno);
		}
		/* Block 1 is this thread's: the main thread writes from block 2. */
		struct iovec v = {block, sizeof(block)};
		ssize_t w = pwritev2(fd, &v, 1, BLOCK, RWF_DSYNC);
		if (w != BLOCK && atomic_fetch_add(&bad_write, 1) == 0)
			fprintf(stderr, "RWF_DSYNC write: %zd (errno %d)\n", w, errno);
		atomic_fetch_add(&rounds, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	const char *path = t_path(dir, "kfd_swap.dat");
	char block[BLOCK];
	memset(block, 'm', sizeof(block));
	for (int n = 0; n < FILES; n++) {
		unlink(path);
		/* A new file each time: a new inode, whose descriptor starts
		 * write-only and is swapped at its first lease. */
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		T_REQUIRE(fd >= 0, "create");
		T_REQUIRE(pwrite(fd, block, BLOCK, 0) == BLOCK, "first block");
		atomic_store(&done, 0);
		pthread_t t;
		long before = atomic_load(&rounds);
		T_REQUIRE(pthread_create(&t, NULL, seeker, NULL) == 0, "thread");
		while (atomic_load(&rounds) == before) /* block 1 written once at least */
			sched_yield();
		for (int i = 2; i < 2 + WRITES; i++)
			if (pwrite(fd, block, BLOCK, (off_t)i * BLOCK) != BLOCK)
				atomic_fetch_add(&bad_write, 1);
		atomic_store(&done, 1);
		pthread_join(t, NULL);
		T_CHECK(close(fd) == 0, "close");
		unsigned char *got;
		long size = t_read_kernel(path, &got);
		T_CHECK(size == (2 + WRITES) * BLOCK, "file %d: size %ld", n, size);
		for (long off = 0; off + BLOCK <= size; off += BLOCK)
			if (got[off] != (off == BLOCK ? 's' : 'm') &&
			    atomic_fetch_add(&bad_data, 1) == 0)
				fprintf(stderr, "file %d, block %ld: %#x\n", n, off / BLOCK,
					got[off]);
		free(got);
	}
	T_CHECK(atomic_load(&bad_seek) == 0, "%ld wrong SEEK_DATA/SEEK_HOLE answers",
		atomic_load(&bad_seek));
	T_CHECK(atomic_load(&bad_write) == 0, "%ld failed writes", atomic_load(&bad_write));
	T_CHECK(atomic_load(&bad_data) == 0, "%ld wrong blocks", atomic_load(&bad_data));
	unlink(path);
	return t_result();
}
