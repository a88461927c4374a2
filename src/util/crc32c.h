/* SPDX-License-Identifier: Apache-2.0 */
/* CRC32C (Castagnoli), as XFS and the operation log use it. The hardware
 * instruction (SSE4.2 crc32) when the CPU has it, else a table. */
#ifndef SFS_UTIL_CRC32C_H
#define SFS_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues crc over buf: start with crc = ~0u and invert the result, as
 * in sfs_crc32c(). */
uint32_t sfs_crc32c_update(uint32_t crc, const void *buf, size_t len);

static inline uint32_t sfs_crc32c(const void *buf, size_t len)
{
	return ~sfs_crc32c_update(~0u, buf, len);
}

#endif
