/* SPDX-License-Identifier: Apache-2.0 */
#include "crc32c.h"

#include <cpuid.h>
#include <stdbool.h>
#include <string.h>

#define POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t table[256];
static int have_hw = -1; /* -1 unknown, 0 no, 1 yes */

static void init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1u)));
		table[i] = c;
	}
	/* One cpuid leaf, at the first checksum: __builtin_cpu_supports
	 * would link libgcc's constructor, which runs a dozen cpuid leaves
	 * (each a trap in a VM) in every process at start. */
	unsigned eax, ebx, ecx, edx;
	have_hw = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_2) ? 1 : 0;
}

__attribute__((target("sse4.2"))) static uint32_t hw(uint32_t crc, const unsigned char *p,
						     size_t len)
{
	uint64_t c = crc;
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	uint32_t c32 = (uint32_t)c;
	for (; len > 0; p++, len--)
		c32 = __builtin_ia32_crc32qi(c32, *p);
	return c32;
}

uint32_t sfs_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	if (have_hw < 0)
		init();
	const unsigned char *p = buf;
	if (have_hw)
		return hw(crc, p, len);
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}
