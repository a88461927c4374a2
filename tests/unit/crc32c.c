/* SPDX-License-Identifier: Apache-2.0 */
/* Description: CRC32C (src/util/crc32c.c) against published test vectors
 * ("123456789" -> 0xE3069283, RFC 3720 B.4's 32-byte patterns and iSCSI
 * read PDU), against a bit-at-a-time reference on every length 0..300 at
 * every alignment 0..7, and chained updates against one pass. Both
 * implementations are checked: the SSE4.2 instruction (when the CPU has
 * it) and the table. The source is included, not linked, so that the test
 * can switch its static have_hw between them. */
#include "../../src/util/crc32c.c"

#include <stdlib.h>

#include "unit.h"

static uint32_t reference(const unsigned char *p, size_t len)
{
	uint32_t c = ~0u;
	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (c & 1 ? 0x82F63B78u : 0);
	}
	return ~c;
}

/* Runs fn once per implementation; 0 when the hardware one is missing. */
static int impls;
static void each_impl(void (*fn)(const char *impl))
{
	sfs_crc32c_update(0, "", 0); /* init(): the table and have_hw */
	int hw_avail = have_hw;
	impls = 0;
	if (hw_avail) {
		fn("sse4.2");
		impls++;
	}
	have_hw = 0;
	fn("table");
	impls++;
	have_hw = hw_avail;
}

static void vectors(const char *impl)
{
	unsigned char buf[48];
	U_CHECK(sfs_crc32c("123456789", 9) == 0xE3069283u, "%s: \"123456789\": %08x", impl,
		sfs_crc32c("123456789", 9));
	U_CHECK(sfs_crc32c("", 0) == 0, "%s: empty", impl);
	const char *fox = "The quick brown fox jumps over the lazy dog";
	U_CHECK(sfs_crc32c(fox, strlen(fox)) == 0x22620404u, "%s: fox", impl);
	memset(buf, 0, 32);
	U_CHECK(sfs_crc32c(buf, 32) == 0x8A9136AAu, "%s: 32 zeros", impl);
	memset(buf, 0xff, 32);
	U_CHECK(sfs_crc32c(buf, 32) == 0x62A8AB43u, "%s: 32 x 0xff", impl);
	for (int i = 0; i < 32; i++)
		buf[i] = (unsigned char)i;
	U_CHECK(sfs_crc32c(buf, 32) == 0x46DD794Eu, "%s: 0..31", impl);
	for (int i = 0; i < 32; i++)
		buf[i] = (unsigned char)(31 - i);
	U_CHECK(sfs_crc32c(buf, 32) == 0x113FDB5Cu, "%s: 31..0", impl);
	static const unsigned char pdu[48] = {
		0x01, 0xc0, 0, 0, 0, 0, 0,    0, 0,    0, 0, 0,	   0, 0, 0, 0,
		0x14, 0,    0, 0, 0, 0, 0x04, 0, 0,    0, 0, 0x14, 0, 0, 0, 0x18,
		0x28, 0,    0, 0, 0, 0, 0,    0, 0x02, 0, 0, 0,	   0, 0, 0, 0,
	};
	U_CHECK(sfs_crc32c(pdu, sizeof(pdu)) == 0xD9963A56u, "%s: iSCSI read PDU", impl);
}

static unsigned char data[320];

static void lengths(const char *impl)
{
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(rand() >> 7);
	int bad = 0;
	for (size_t align = 0; align < 8; align++)
		for (size_t len = 0; len + align <= 300; len++)
			bad += sfs_crc32c(data + align, len) != reference(data + align, len);
	U_CHECK(bad == 0, "%s: %d of the (alignment, length) pairs differ from the reference", impl,
		bad);
}

static void chained(const char *impl)
{
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 131 + 7);
	uint32_t whole = sfs_crc32c(data, 257);
	int bad = 0;
	for (size_t cut = 0; cut <= 257; cut++) {
		uint32_t c = sfs_crc32c_update(~0u, data, cut);
		bad += ~sfs_crc32c_update(c, data + cut, 257 - cut) != whole;
	}
	U_CHECK(bad == 0, "%s: %d of 258 two-part updates differ from one pass", impl, bad);
	/* A flipped bit anywhere changes the sum. */
	int same = 0;
	for (size_t bit = 0; bit < 257 * 8; bit++) {
		data[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		same += sfs_crc32c(data, 257) == whole;
		data[bit / 8] ^= (unsigned char)(1u << (bit % 8));
	}
	U_CHECK(same == 0, "%s: %d single-bit flips left the CRC unchanged", impl, same);
}

U_TEST(vectors, "published CRC32C vectors, hardware and table")
{
	each_impl(vectors);
	U_CHECK(impls >= 1, "no implementation ran");
	if (!have_hw)
		printf("  (this CPU has no SSE4.2: the table only)\n");
}

U_TEST(lengths, "lengths 0..300 x alignments 0..7 vs bitwise reference")
{
	each_impl(lengths);
}

U_TEST(chained, "split updates equal one pass; every bit flip detected")
{
	each_impl(chained);
}
