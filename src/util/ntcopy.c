/* SPDX-License-Identifier: Apache-2.0 */
#include "ntcopy.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h> /* SSE2: part of every x86-64 CPU */

#define LINE 64

void *sfs_copy_nt(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	/* A partial line at the start: a cached store (a non-temporal store of
	 * part of a line makes the CPU read the rest of it anyway). */
	size_t head = (size_t)(-(uintptr_t)d & (LINE - 1));
	if (head > n)
		head = n;
	memcpy(d, s, head);
	d += head;
	s += head;
	n -= head;
	for (; n >= LINE; n -= LINE, d += LINE, s += LINE) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
		_mm_stream_si128((__m128i *)(void *)d, a);
		_mm_stream_si128((__m128i *)(void *)(d + 16), b);
		_mm_stream_si128((__m128i *)(void *)(d + 32), c);
		_mm_stream_si128((__m128i *)(void *)(d + 48), e);
	}
	memcpy(d, s, n);
	/* Non-temporal stores are weakly ordered: ordered here before any
	 * later store (x86 orders every other store itself). */
	_mm_sfence();
	return dst;
}

void sfs_copy_nt_fence(void)
{
	_mm_sfence();
}

#else

void *sfs_copy_nt(void *dst, const void *src, size_t n)
{
	return memcpy(dst, src, n);
}

void sfs_copy_nt_fence(void)
{
}

#endif
