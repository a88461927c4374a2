/* SPDX-License-Identifier: Apache-2.0 */
/* The descriptors a posix_spawn file actions object dup2s into the child
 * (spawnfa.c). */
#ifndef SFS_INTERPOSE_SPAWNFA_H
#define SFS_INTERPOSE_SPAWNFA_H

#include <spawn.h>

/* The most dup2 sources one actions object records; past that its actions
 * are unknown. A caller's array of this many holds any known object's. */
#define SFS_SPAWN_FA_SOURCES 16

/* How many descriptors fa dup2s into the child, each in fds (at most max),
 * or -1 when the library does not know fa's actions. */
int sfs_spawn_fa_sources(const posix_spawn_file_actions_t *fa, int *fds, int max);

#endif
