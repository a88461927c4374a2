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

bool sfs_log_record_framed(const struct sfs_log_entry *e, uint64_t gen, uint64_t room)
{
	return e->gen == gen && e->version == 1 && e->op >= SFS_LOG_FILE &&
	       e->op <= SFS_LOG_OP_LAST && sfs_log_record_len(e->payload) <= room;
}

bool sfs_log_record_valid(const struct sfs_log_entry *e, uint64_t gen, uint64_t room)
{
	return sfs_log_record_framed(e, gen, room) && e->crc == sfs_log_crc(e, e + 1);
}

int sfs_log_entry_by_seq(const void *a, const void *b)
{
	uint64_t x = (*(const struct sfs_log_entry *const *)a)->seq;
	uint64_t y = (*(const struct sfs_log_entry *const *)b)->seq;
	return x < y ? -1 : x > y;
}
