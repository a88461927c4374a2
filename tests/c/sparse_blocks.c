/* SPDX-License-Identifier: Apache-2.0 */
/* Description: a sparse file, written and closed, then stat'd by the
 * process that wrote it, shows the blocks the kernel's file has: no more
 * than the same file written without the library. The file is made as
 * Python's tarfile extracts a sparse member: 4 KiB pieces every 8 KiB from 4 KiB on
 * written through a fresh descriptor (a seek before each), then a
 * truncate up to the member's size, then the close (the member gnu/sparse
 * of its testtar.tar). The reference file is
 * made the same way with raw system calls, which the library does not
 * see. In sync and strict modes the library's own descriptor of the file
 * stayed open after the close, so XFS had not yet freed the blocks it had
 * allocated ahead past the end, and stat counted them (test_tarfile's
 * sparse tests: 94,208 bytes of blocks in an 86,016-byte file).
 *   sparse_blocks DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helpers.h"

#define PIECE 4096
#define FIRST PIECE
#define STRIDE (2 * PIECE)
#define PIECES 10
#define SIZE 86016L

/* Writes the file at path through the library (raw false) or around it. */
static void make(const char *path, bool raw)
{
	static unsigned char piece[PIECE];
	memset(piece, 'x', sizeof(piece));
	/* A new file each time: XFS keeps what it allocated ahead for a file
	 * truncated and written again (XFS_IDIRTY_RELEASE). */
	unlink(path);
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
	int fd = raw ? (int)syscall(SYS_openat, AT_FDCWD, path, flags, 0644) :
		       open(path, flags, 0644);
	T_REQUIRE(fd >= 0, "create %s", path);
	for (int i = 0; i < PIECES; i++) {
		off_t at = FIRST + (off_t)i * STRIDE;
		if (raw)
			T_CHECK(syscall(SYS_pwrite64, fd, piece, PIECE, at) == PIECE,
				"raw write %d", i);
		else
			T_CHECK(lseek(fd, at, SEEK_SET) == at && write(fd, piece, PIECE) == PIECE,
				"write %d", i);
	}
	if (raw) {
		T_CHECK(syscall(SYS_ftruncate, fd, SIZE) == 0, "raw truncate");
		T_CHECK(syscall(SYS_close, fd) == 0, "raw close");
	} else {
		T_CHECK(ftruncate(fd, SIZE) == 0, "truncate");
		T_CHECK(close(fd) == 0, "close");
	}
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: sparse_blocks DIR");
	const char *ref = t_path(argv[1], "reference");
	const char *lib = t_path(argv[1], "sparse");
	make(ref, true);
	make(lib, false);
	struct stat r, l;
	T_REQUIRE(stat(ref, &r) == 0 && stat(lib, &l) == 0, "stat both");
	printf("blocks: through the library %lld, around it %lld\n", (long long)l.st_blocks,
	       (long long)r.st_blocks);
	T_CHECK(l.st_size == SIZE && r.st_size == SIZE, "sizes %lld and %lld, not %ld",
		(long long)l.st_size, (long long)r.st_size, SIZE);
	T_CHECK(l.st_blocks <= r.st_blocks,
		"the file written through the library has %lld bytes of blocks, the one written "
		"around it %lld",
		(long long)l.st_blocks * 512, (long long)r.st_blocks * 512);
	T_CHECK(l.st_blocks * 512 < l.st_size, "%lld bytes of blocks: not sparse",
		(long long)l.st_blocks * 512);
	return t_result();
}
