/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "names.h"

#include <stdlib.h>
#include <string.h>

bool sfs_names_add(struct sfs_names *l, const char *name)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return false;
	l->v[l->n++] = copy;
	return true;
}

void sfs_names_free(struct sfs_names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
