/* SPDX-License-Identifier: Apache-2.0 */
/* A growing list of file names, copied (a directory read once, its
 * entries handled after: the directory changes as they are). */
#ifndef SFS_UTIL_NAMES_H
#define SFS_UTIL_NAMES_H

#include <stdbool.h>
#include <stddef.h>

struct sfs_names {
	char **v;
	size_t n, cap;
};

/* Adds a copy of name; false when out of memory (the list is unchanged). */
bool sfs_names_add(struct sfs_names *l, const char *name);

/* Frees the copies and the list; it is empty again. */
void sfs_names_free(struct sfs_names *l);

#endif
