/* SPDX-License-Identifier: Apache-2.0 */
/* posix_spawn's file actions, as far as sharing goes. A spawned child gets
 * the parent's descriptors without FD_CLOEXEC, and whatever its file
 * actions dup2 into it: adddup2 is the only action that hands the child an
 * open file of the parent's (addopen opens a file of its own, which breaks
 * the parent's lease as any open does). The actions object is opaque, so
 * the library records the dup2 sources as the public builders add them,
 * from posix_spawn_file_actions_init to _destroy. An object it did not see
 * initialised (made before the library was loaded, copied, too many at
 * once) is unknown, and a spawn with it shares every descriptor. Rust's
 * std::process::Command and GNU make spawn with actions (the child's
 * stdio), and before this every such spawn demoted every managed file. */
#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <stdbool.h>

#include "../util/signals.h"
#include "spawnfa.h"
#include "wrap.h"

#define MAX_OBJECTS 32 /* actions objects alive at once */

struct actions {
	const posix_spawn_file_actions_t *fa; /* NULL: free */
	int n;
	bool overflow; /* more sources than recorded: unknown */
	int sources[SFS_SPAWN_FA_SOURCES];
};

static struct actions objects[MAX_OBJECTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Caller holds lock. */
static struct actions *find(const posix_spawn_file_actions_t *fa)
{
	for (int i = 0; i < MAX_OBJECTS; i++)
		if (objects[i].fa == fa)
			return &objects[i];
	return NULL;
}

SFS_EXPORT int posix_spawn_file_actions_init(posix_spawn_file_actions_t *fa)
{
	sfs_init();
	int rc = SFS_REAL(posix_spawn_file_actions_init)(fa);
	if (rc == 0) {
		sfs_mutex_lock(&lock);
		struct actions *a = find(fa); /* reused without a destroy */
		if (!a)
			a = find(NULL);
		if (a)
			*a = (struct actions){.fa = fa};
		sfs_mutex_unlock(&lock);
	}
	return rc;
}

SFS_EXPORT int posix_spawn_file_actions_destroy(posix_spawn_file_actions_t *fa)
{
	sfs_init();
	sfs_mutex_lock(&lock);
	struct actions *a = find(fa);
	if (a)
		a->fa = NULL;
	sfs_mutex_unlock(&lock);
	return SFS_REAL(posix_spawn_file_actions_destroy)(fa);
}

SFS_EXPORT int posix_spawn_file_actions_adddup2(posix_spawn_file_actions_t *fa, int fd, int newfd)
{
	sfs_init();
	int rc = SFS_REAL(posix_spawn_file_actions_adddup2)(fa, fd, newfd);
	if (rc == 0) {
		sfs_mutex_lock(&lock);
		struct actions *a = find(fa);
		if (a && a->n < SFS_SPAWN_FA_SOURCES)
			a->sources[a->n++] = fd;
		else if (a)
			a->overflow = true;
		sfs_mutex_unlock(&lock);
	}
	return rc;
}

int sfs_spawn_fa_sources(const posix_spawn_file_actions_t *fa, int *fds, int max)
{
	sfs_mutex_lock(&lock);
	struct actions *a = fa ? find(fa) : NULL;
	int n = a && !a->overflow && a->n <= max ? a->n : -1;
	for (int i = 0; i < n; i++)
		fds[i] = a->sources[i];
	sfs_mutex_unlock(&lock);
	return n;
}
