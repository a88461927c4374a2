/* SPDX-License-Identifier: Apache-2.0 */
#include "format.h"

#include "../util/crc32c.h"

uint32_t sfs_log_crc(const struct sfs_log_entry *e, const void *payload)
{
	struct sfs_log_entry z = *e;
	z.crc = 0;
	uint32_t c = sfs_crc32c_update(~0u, &z, sizeof(z));
	if (e->payload)
		c = sfs_crc32c_update(c, payload, e->payload);
	return ~c;
}
