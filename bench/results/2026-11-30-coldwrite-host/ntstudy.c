/* SPDX-License-Identifier: Apache-2.0 */
/* The study behind src/fs/coldwrite.h, without the library: 4 KiB copies
 * into a 128 MiB MAP_SHARED mapping of a file on the image (its page
 * cache in 256 KiB folios, every page faulted in writable first), in a
 * shuffled or a sequential order, as memcpy, memcpy between two locked
 * instructions (the library's seqlock), non-temporal SSE2 stores with a
 * fence, and the same between two locked instructions; then hot: random
 * 4 KiB copies within working sets of 4 KiB to 256 MiB of anonymous
 * memory, memcpy against the non-temporal copy. Best of 3 passes, ns/op.
 *   gcc -O2 -o ntstudy ntstudy.c && ./ntstudy /mnt/t/nt.dat [seq] */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void ntcopy(char *d, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i += 64)
		for (int k = 0; k < 64; k += 16)
			_mm_stream_si128((__m128i *)(d + i + k),
					 _mm_loadu_si128((const __m128i *)(s + i + k)));
	_mm_sfence();
}

static _Atomic int ctr;

int main(int argc, char **argv)
{
	size_t len = 128 << 20, piece = 256 << 10;
	long n = (long)(len / 4096);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	char *w = malloc(piece);
	memset(w, 'y', piece);
	for (size_t o = 0; o < len; o += piece)
		if (pwrite(fd, w, piece, (off_t)o) != (ssize_t)piece)
			return 1;
	fsync(fd);
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	long *ord = malloc((size_t)n * sizeof(long));
	for (long i = 0; i < n; i++)
		ord[i] = i;
	if (argc < 3) {
		srand(1);
		for (long i = n - 1; i > 0; i--) {
			long j = rand() % (i + 1), t = ord[i];
			ord[i] = ord[j];
			ord[j] = t;
		}
	}
	static char buf[4096] __attribute__((aligned(64)));
	memset(buf, 'z', sizeof(buf));
	for (long i = 0; i < n; i++)
		m[i * 4096] = 1;
	static const char *const names[] = {"memcpy", "memcpy+2 locked", "non-temporal",
					    "non-temporal+2 locked"};
	for (int mode = 0; mode < 4; mode++) {
		double best = 1e18;
		for (int r = 0; r < 3; r++) {
			double a = now();
			for (long i = 0; i < n; i++) {
				char *d = m + ord[i] * 4096;
				if (mode & 1)
					atomic_fetch_add(&ctr, 1);
				if (mode < 2)
					memcpy(d, buf, 4096);
				else
					ntcopy(d, buf, 4096);
				if (mode & 1)
					atomic_fetch_add(&ctr, 1);
				__asm__ volatile("" ::"r"(d) : "memory");
			}
			double t = (now() - a) / n;
			best = t < best ? t : best;
		}
		printf("%s %s: %.0f ns/op\n", argc < 3 ? "random" : "sequential", names[mode],
		       best);
	}
	for (size_t ws = 4096; ws <= (256u << 20); ws *= 4) {
		char *h = aligned_alloc(4096, ws);
		memset(h, 0, ws);
		long nb = (long)(ws / 4096), iters = 200000;
		for (int mode = 0; mode < 2; mode++) {
			unsigned long x = 1;
			double a = now();
			for (long i = 0; i < iters; i++) {
				x = x * 6364136223846793005ul + 1;
				char *d = h + ((x >> 33) % (unsigned long)nb) * 4096;
				if (mode)
					ntcopy(d, buf, 4096);
				else
					memcpy(d, buf, 4096);
				__asm__ volatile("" ::"r"(d) : "memory");
			}
			printf("hot, working set %zu KiB, %s: %.0f ns/op\n", ws >> 10,
			       mode ? "non-temporal" : "memcpy", (now() - a) / iters);
		}
		free(h);
	}
	return 0;
}
