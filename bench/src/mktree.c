/* SPDX-License-Identifier: Apache-2.0 */
/* Description: makes the file tree of the utilities benchmark
 * (bench/workloads/utils.sh): FILES regular files spread round-robin over
 * DIRS directories (d000/, d001/, ...), sizes uniform in [0, MAX_KIB KiB],
 * contents lines of pseudo-random lowercase words (compressible about like
 * source code). Deterministic: the same arguments give the same tree, byte
 * for byte. DIR must not exist.
 *   mktree DIR FILES DIRS MAX_KIB [SEED] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t state;

static uint64_t next(void) /* splitmix64 */
{
	uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static long arg(const char *s, long min)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *s == '\0' || *end != '\0' || v < min) {
		fprintf(stderr, "mktree: bad number %s\n", s);
		exit(2);
	}
	return v;
}

/* Fills buf with n bytes of words of 1-10 letters, lines of up to 72. */
static void fill(char *buf, size_t n)
{
	size_t col = 0;
	for (size_t i = 0; i < n;) {
		uint64_t r = next();
		unsigned len = 1 + (unsigned)(r % 10);
		r >>= 8;
		for (unsigned k = 0; k < len && i < n; k++, col++) {
			buf[i++] = (char)('a' + (r % 16)); /* a small alphabet */
			r >>= 4;
		}
		if (i < n) {
			buf[i++] = col > 72 ? '\n' : ' ';
			col = col > 72 ? 0 : col + 1;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: mktree DIR FILES DIRS MAX_KIB [SEED]\n");
		return 2;
	}
	const char *root = argv[1];
	long files = arg(argv[2], 1), dirs = arg(argv[3], 1), max_kib = arg(argv[4], 0);
	state = argc > 5 ? (uint64_t)arg(argv[5], 0) : 1;
	size_t max = (size_t)max_kib * 1024;
	char *buf = malloc(max + 1);
	char path[4096];
	if (!buf || mkdir(root, 0755) != 0) {
		perror(root);
		return 1;
	}
	for (long d = 0; d < dirs; d++) {
		snprintf(path, sizeof(path), "%s/d%03ld", root, d);
		if (mkdir(path, 0755) != 0) {
			perror(path);
			return 1;
		}
	}
	for (long f = 0; f < files; f++) {
		size_t size = (size_t)(next() % (max + 1));
		fill(buf, size);
		snprintf(path, sizeof(path), "%s/d%03ld/f%05ld.txt", root, f % dirs, f);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0 || write(fd, buf, size) != (ssize_t)size || close(fd) != 0) {
			perror(path);
			return 1;
		}
	}
	free(buf);
	return 0;
}
