/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "inoset.h"
#include "../util/signals.h"

#include <stdint.h>
#include <stdlib.h>

static unsigned hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev;
	return (unsigned)(h >> 40) % SFS_INOSET_CAP;
}

bool sfs_inoset_has(struct sfs_inoset *s, dev_t dev, ino_t ino)
{
	if (!atomic_load_explicit(&s->count, memory_order_acquire))
		return false;
	bool found = false;
	sfs_mutex_lock(&s->lock);
	for (unsigned i = hash(dev, ino), k = 0; k < SFS_INOSET_CAP;
	     k++, i = (i + 1) % SFS_INOSET_CAP) {
		if (s->slot[i].ino == 0)
			break;
		if (s->slot[i].dev == dev && s->slot[i].ino == ino) {
			found = true;
			break;
		}
	}
	sfs_mutex_unlock(&s->lock);
	return found;
}

bool sfs_inoset_add(struct sfs_inoset *s, dev_t dev, ino_t ino)
{
	bool added = true;
	sfs_mutex_lock(&s->lock);
	if (!s->slot)
		s->slot = calloc(SFS_INOSET_CAP, sizeof(*s->slot));
	if (!s->slot) {
		sfs_mutex_unlock(&s->lock);
		return false;
	}
	for (unsigned i = hash(dev, ino);; i = (i + 1) % SFS_INOSET_CAP) {
		if (s->slot[i].dev == dev && s->slot[i].ino == ino)
			break;
		if (s->slot[i].ino == 0) {
			/* Keep probe chains short: refuse past three quarters. */
			if (atomic_load(&s->count) >= SFS_INOSET_CAP * 3 / 4) {
				added = false;
				break;
			}
			s->slot[i].dev = dev;
			s->slot[i].ino = ino;
			atomic_fetch_add(&s->count, 1);
			break;
		}
	}
	sfs_mutex_unlock(&s->lock);
	return added;
}

void sfs_inoset_each(struct sfs_inoset *s, void (*fn)(dev_t, ino_t))
{
	if (!atomic_load_explicit(&s->count, memory_order_acquire))
		return; /* then there may be no table */
	for (int i = 0; i < SFS_INOSET_CAP; i++)
		if (s->slot[i].ino)
			fn(s->slot[i].dev, s->slot[i].ino);
}

void sfs_inoset_reset_lock(struct sfs_inoset *s)
{
	sfs_mutex_reset_child(&s->lock);
}
