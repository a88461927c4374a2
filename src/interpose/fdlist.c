/* SPDX-License-Identifier: Apache-2.0 */
/* The process's listing of its own descriptors (/proc/self/fd, /dev/fd,
 * /proc/<its pid>/fd, /proc/thread-self/fd) shows the application's
 * descriptors only. The library's own (512 and up, sys/self.h: a managed
 * file's descriptor, kept after the application closed it so that a
 * reopen finds the file mapped; .splitfs; staging files) do not exist for
 * the application: a close of one answers EBADF, a dup2 onto one EBUSY.
 * So a program that counts or closes what it holds by listing that
 * directory (Python's test.support.fd_count, a daemon closing what it
 * inherited) sees what it would under the kernel.
 *
 * Seen through opendir and readdir: a directory stream opened by name is
 * remembered until its closedir, and its readdir skips the library's
 * numbers. A listing by getdents64, or of a descriptor given to fdopendir,
 * still shows them (README, "Limits"). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fs/process.h"
#include "wrap.h"

/* The streams that list this process's descriptors. A program lists one at
 * a time; one more than the table holds is listed unfiltered. */
#define LISTINGS 8
static _Atomic(DIR *) listings[LISTINGS];
SFS_HOT static atomic_int nlistings; /* slots in use: readdir's one look */

/* Skips "/" characters: true when nothing else is left. */
static bool only_slashes(const char *p)
{
	while (*p == '/')
		p++;
	return *p == '\0';
}

/* p after "/proc/": "self", "thread-self" or this process's pid, then
 * "/fd". */
static bool proc_fd_dir(const char *p)
{
	if (strncmp(p, "self/", 5) == 0)
		p += 5;
	else if (strncmp(p, "thread-self/", 12) == 0)
		p += 12;
	else {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p || *end != '/' || pid != (long)getpid())
			return false;
		p = end + 1;
	}
	while (*p == '/')
		p++;
	return strncmp(p, "fd", 2) == 0 && only_slashes(p + 2);
}

/* Whether path names the directory of this process's descriptors. A
 * relative name, or one through another symlink, is not recognised. */
static bool names_own_fds(const char *path)
{
	if (!path || path[0] != '/')
		return false;
	if (strncmp(path, "/dev/fd", 7) == 0)
		return only_slashes(path + 7);
	return strncmp(path, "/proc/", 6) == 0 && proc_fd_dir(path + 6);
}

/* Puts to in the first slot that holds from; false when none does. */
static bool swap_listing(DIR *from, DIR *to)
{
	for (int i = 0; i < LISTINGS; i++) {
		DIR *was = from;
		if (atomic_compare_exchange_strong(&listings[i], &was, to))
			return true;
	}
	return false;
}

static void remember(DIR *d)
{
	if (swap_listing(NULL, d))
		atomic_fetch_add(&nlistings, 1);
}

static bool remembered(DIR *d)
{
	for (int i = 0; i < LISTINGS; i++)
		if (atomic_load_explicit(&listings[i], memory_order_relaxed) == d)
			return true;
	return false;
}

static void forget(DIR *d)
{
	if (swap_listing(d, NULL))
		atomic_fetch_sub(&nlistings, 1);
}

/* An entry of the listing that is one of the library's descriptors. */
static bool library_fd(const char *name)
{
	if (name[0] < '0' || name[0] > '9')
		return false;
	char *end;
	long fd = strtol(name, &end, 10);
	return *end == '\0' && fd <= 0x7fffffff && sfs_fd_is_internal((int)fd);
}

SFS_EXPORT DIR *opendir(const char *path)
{
	sfs_init();
	DIR *d = SFS_FD_RETRY(DIR *, NULL, sfs_real.opendir(path));
	if (d && names_own_fds(path))
		remember(d);
	return d;
}

SFS_EXPORT int closedir(DIR *d)
{
	static void *real;
	int (*fn)(DIR *) = sfs_early_next("closedir", &real);
	if (atomic_load_explicit(&nlistings, memory_order_relaxed))
		forget(d); /* before the stream's memory can be reused */
	return fn(d);
}

SFS_EXPORT struct dirent *readdir(DIR *d)
{
	static void *real;
	struct dirent *(*fn)(DIR *) = sfs_early_next("readdir", &real);
	struct dirent *e = fn(d);
	if (sfs_likely(!atomic_load_explicit(&nlistings, memory_order_relaxed)) || !remembered(d))
		return e;
	while (e && library_fd(e->d_name))
		e = fn(d);
	return e;
}

SFS_ALIAS(readdir64, readdir);
