/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "inolock.h"

#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../sys/real.h"
#include "../util/compiler.h"
#include "../util/signals.h"

/* --- barrier ------------------------------------------------------------- */

/* barrier: 0 open, 1 closed, 2 closed with readers sleeping on the futex. */
static void futex(atomic_int *word, int op, int val)
{
	SFS_REAL(syscall)(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

__thread int sfs_reader_slot __attribute__((tls_model("initial-exec"))) = -1;

int sfs_reader_slot_assign(void)
{
	static atomic_uint next;
	sfs_reader_slot = (int)(atomic_fetch_add(&next, 1) % SFS_READER_SLOTS);
	return sfs_reader_slot;
}

void sfs_barrier_close(struct sfs_inode *in)
{
	atomic_store(&in->barrier, 1);
	while (sfs_readers_active(in))
		sched_yield();
}

void sfs_barrier_open(struct sfs_inode *in)
{
	if (atomic_exchange(&in->barrier, 0) == 2)
		futex(&in->barrier, FUTEX_WAKE, INT_MAX);
}

/* Out-of-line slow path of sfs_read_enter when the barrier is closed: sleep
 * rather than spin, since a relink can take milliseconds. */
void sfs_read_wait(struct sfs_inode *in)
{
	int b = 1;
	atomic_compare_exchange_strong(&in->barrier, &b, 2);
	if (atomic_load(&in->barrier) == 2)
		futex(&in->barrier, FUTEX_WAIT, 2);
}

/* --- the writer lock and other processes ---------------------------------- */

/* The inode locks this thread holds (a few at most: no path nests deeper),
 * so that a thread about to wait for the operation log can relink its own
 * windows first (sfs_relink_held). One beyond the array is not tracked. */
static __thread struct sfs_inode *held[4] __attribute__((tls_model("initial-exec")));
static __thread int nheld __attribute__((tls_model("initial-exec")));

static void held_add(struct sfs_inode *in)
{
	if (nheld < (int)SFS_ARRAY_SIZE(held))
		held[nheld] = in;
	nheld++;
}

static void held_remove(struct sfs_inode *in)
{
	int n = SFS_MIN(nheld, (int)SFS_ARRAY_SIZE(held));
	for (int i = n - 1; i >= 0; i--) {
		if (held[i] == in) {
			held[i] = held[n - 1];
			break;
		}
	}
	nheld--;
}

void sfs_inode_lock(struct sfs_inode *in)
{
	sfs_mutex_lock(&in->lock);
	held_add(in);
}

bool sfs_inode_trylock(struct sfs_inode *in)
{
	if (sfs_mutex_trylock(&in->lock) != 0)
		return false;
	held_add(in);
	return true;
}

void sfs_inode_unlock(struct sfs_inode *in)
{
	held_remove(in);
	sfs_mutex_unlock(&in->lock);
}

bool sfs_inode_held_here(const struct sfs_inode *in)
{
	int n = SFS_MIN(nheld, (int)SFS_ARRAY_SIZE(held));
	for (int i = 0; i < n; i++)
		if (held[i] == in)
			return true;
	return false;
}

int sfs_inode_held(struct sfs_inode **out, int max)
{
	int n = SFS_MIN(SFS_MIN(nheld, (int)SFS_ARRAY_SIZE(held)), max);
	memcpy(out, held, (size_t)n * sizeof(*out));
	return n;
}
