/* SPDX-License-Identifier: Apache-2.0 */
/* Description: open flags the library must honour: O_TRUNC drops staged
 * bytes, O_DIRECT reads see staged data of another descriptor (relinked
 * first), O_CREAT|O_EXCL, O_WRONLY cannot read, an application mmap sees
 * staged data and its stores are seen by read(), creat(). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char *p = t_path(dir, "flags.dat");
	unsigned char buf[8192], got[8192];
	t_fill(buf, sizeof(buf), 3, 0);
	unlink(p);

	/* O_CREAT|O_EXCL, then O_TRUNC of a file with staged data. */
	int fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0644);
	T_REQUIRE(fd >= 0, "create");
	T_CHECK(open(p, O_RDWR | O_CREAT | O_EXCL, 0644) == -1 && errno == EEXIST, "O_EXCL");
	T_CHECK(write(fd, buf, 5000) == 5000, "staged write");
	int t = open(p, O_WRONLY | O_TRUNC);
	T_REQUIRE(t >= 0, "O_TRUNC open");
	struct stat st;
	T_CHECK(fstat(fd, &st) == 0 && st.st_size == 0, "size after O_TRUNC %ld", (long)st.st_size);
	T_CHECK(read(t, got, 1) == -1 && errno == EBADF, "read on O_WRONLY");
	T_CHECK(write(t, buf, 100) == 100, "write after truncate");
	T_CHECK(pread(fd, got, sizeof(got), 0) == 100 && memcmp(got, buf, 100) == 0,
		"content after truncate+write");
	close(t);

	/* O_DIRECT sees what another descriptor staged. */
	T_CHECK(pwrite(fd, buf, 8192, 0) == 8192, "staged 8 KiB");
	int d = open(p, O_RDONLY | O_DIRECT);
	if (d >= 0) {
		void *al;
		T_REQUIRE(posix_memalign(&al, 4096, 8192) == 0, "memalign");
		T_CHECK(pread(d, al, 8192, 0) == 8192 && memcmp(al, buf, 8192) == 0,
			"O_DIRECT read of staged data");
		free(al);
		close(d);
	}

	/* An application mapping sees staged data, and read() sees its stores. */
	T_CHECK(write(fd, buf, 4096) == 4096, "append before mmap"); /* offset was 0: overwrite */
	T_CHECK(pwrite(fd, buf, 4096, 8192) == 4096, "append 4 KiB");
	char *m = mmap(NULL, 12288, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_REQUIRE(m != MAP_FAILED, "mmap");
	T_CHECK(memcmp(m + 8192, buf, 4096) == 0, "mapping sees the staged append");
	memset(m + 100, 'Z', 10);
	T_CHECK(pread(fd, got, 10, 100) == 10 && memcmp(got, "ZZZZZZZZZZ", 10) == 0,
		"read sees the mapping's store");
	T_CHECK(write(fd, buf, 10) == 10, "write after mmap");
	munmap(m, 12288);
	close(fd);

	/* creat truncates and opens write-only. */
	fd = creat(p, 0600);
	T_REQUIRE(fd >= 0, "creat");
	T_CHECK(fstat(fd, &st) == 0 && st.st_size == 0, "creat truncates");
	T_CHECK(read(fd, got, 1) == -1 && errno == EBADF, "creat is write-only");
	close(fd);
	unlink(p);
	return t_result();
}
