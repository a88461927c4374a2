/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "real.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/compiler.h"

SFS_HOT struct sfs_real_table sfs_real;

/* The names inline, not pointers: a table of pointers would be relocated
 * (its page copied) in every process the library starts in. */
struct real_row {
	char name[40];
	size_t offset;
};

#define SFS_X(ret, fn, args)                                                                       \
	static_assert(sizeof(#fn) <= sizeof(((struct real_row *)0)->name), #fn " fits");
SFS_REAL_FUNCS(SFS_X)
#undef SFS_X

static const struct real_row rows[] = {
#define SFS_X(ret, name, args) {#name, offsetof(struct sfs_real_table, name)},
	SFS_REAL_FUNCS(SFS_X)
#undef SFS_X
};

static_assert(SFS_ARRAY_SIZE(rows) == SFS_REAL_ROWS, "one row per function");

void *sfs_real_lookup(enum sfs_real_row row)
{
	void **at = (void **)((char *)&sfs_real + rows[row].offset);
	void *p = __atomic_load_n(at, __ATOMIC_RELAXED);
	if (!p) {
		p = dlsym(RTLD_NEXT, rows[row].name);
		__atomic_store_n(at, p, __ATOMIC_RELAXED);
	}
	return p;
}

SFS_HOT static atomic_int resolved;
atomic_bool sfs_real_handler_seen;

void sfs_real_resolve(void)
{
	if (atomic_load_explicit(&resolved, memory_order_acquire))
		return;
	for (size_t i = 0; i < SFS_ARRAY_SIZE(rows); i++)
		sfs_real_lookup((enum sfs_real_row)i);
	atomic_store_explicit(&resolved, 1, memory_order_release);
}

ssize_t sfs_kernel_getdents64(int fd, void *buf, size_t len)
{
	return SFS_REAL(syscall)(SYS_getdents64, fd, buf, len);
}

ssize_t sfs_kernel_read_text(const char *path, char *buf, size_t size)
{
	if (size == 0)
		return -1;
	int saved = errno;
	ssize_t n = -1;
	int fd = SFS_REAL(open)(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = SFS_REAL(read)(fd, buf, size - 1);
		SFS_REAL(close)(fd);
	}
	errno = saved;
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}
