/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "dirscan.h"

void sfs_dirscan_start(struct sfs_dirscan *s, int fd, sfs_getdents_fn getdents)
{
	s->getdents = getdents;
	s->fd = fd;
	s->at = 0;
	s->len = 0;
}

const struct dirent64 *sfs_dirscan_next(struct sfs_dirscan *s)
{
	if (s->at >= s->len) {
		ssize_t n = s->fd >= 0 ? s->getdents(s->fd, s->buf, sizeof(s->buf)) : -1;
		if (n <= 0) {
			s->len = s->at = 0;
			return NULL;
		}
		s->len = (int)n;
		s->at = 0;
	}
	const struct dirent64 *e = (const struct dirent64 *)(s->buf + s->at);
	s->at += e->d_reclen;
	return e;
}
