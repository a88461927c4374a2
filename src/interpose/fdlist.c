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
 * numbers. A descriptor opened by such a name (open, openat) is marked: a
 * stream fdopendir makes of it is remembered too, and what getdents64
 * (the function, or syscall()) reads from it is filtered. A descriptor of
 * that directory got another way (openat of "fd" in /proc/self, an
 * inherited one) still lists them (README, "Limits"). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fs/process.h"
#include "fdlist.h"
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

/* p after "/proc/": "self", "thread-self" or this process's pid (then
 * optionally "task/<tid>", which is how a descriptor of thread-self's
 * directory reads back), then "/fd". */
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
		if (strncmp(p, "task/", 5) == 0) {
			long tid = strtol(p + 5, &end, 10);
			if (end == p + 5 || *end != '/' || tid <= 0)
				return false;
			p = end + 1;
		}
	}
	while (*p == '/')
		p++;
	return strncmp(p, "fd", 2) == 0 && only_slashes(p + 2);
}

/* Whether path names the directory of this process's descriptors. A
 * relative name, or one through another symlink, is not recognised. */
static bool names_own_fds(const char *path)
{
	/* Every open passes here: its second byte turns most paths away
	 * before a string comparison. */
	if (!path || path[0] != '/')
		return false;
	if (path[1] == 'd')
		return strncmp(path, "/dev/fd", 7) == 0 && only_slashes(path + 7);
	return path[1] == 'p' && strncmp(path, "/proc/", 6) == 0 && proc_fd_dir(path + 6);
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

/* Descriptors opened by a name of the directory (each + 1; 0: none). A
 * number closed and reused since is told apart by lists_own_fds; the
 * ninth such open replaces the oldest mark. */
#define MARKS 8
static atomic_int marks[MARKS];
static atomic_uint next_mark;

static void mark(int fd)
{
	atomic_store(&marks[atomic_fetch_add(&next_mark, 1) % MARKS], fd + 1);
}

static bool marked(int fd)
{
	for (int i = 0; i < MARKS; i++)
		if (atomic_load_explicit(&marks[i], memory_order_relaxed) == fd + 1)
			return true;
	return false;
}

void sfs_fdlist_opened(int fd, const char *path)
{
	if (fd >= 0 && names_own_fds(path))
		mark(fd);
}

void sfs_fdlist_dup(int oldfd, int newfd)
{
	if (oldfd >= 0 && newfd >= 0 && marked(oldfd))
		mark(newfd);
}

/* Whether fd is a marked descriptor that is (still) open on this
 * process's descriptor directory: its link in /proc says so. */
static bool lists_own_fds(int fd)
{
	if (fd < 0 || !marked(fd))
		return false;
	char link[48], target[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	int saved = errno;
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	errno = saved;
	if (n <= 0)
		return false;
	target[n] = '\0';
	return names_own_fds(target);
}

SFS_EXPORT DIR *opendir(const char *path)
{
	sfs_init();
	DIR *d = SFS_FD_RETRY(DIR *, NULL, SFS_REAL(opendir)(path));
	if (d && names_own_fds(path))
		remember(d);
	return d;
}

SFS_EXPORT DIR *fdopendir(int fd)
{
	sfs_init();
	DIR *d = SFS_REAL(fdopendir)(fd);
	if (d && lists_own_fds(fd))
		remember(d);
	return d;
}

/* Leaves the library's descriptors out of n bytes of entries in buf;
 * returns the bytes left. */
static ssize_t drop_library_fds(char *buf, ssize_t n)
{
	ssize_t to = 0;
	for (ssize_t at = 0; at < n;) {
		struct dirent64 *e = (struct dirent64 *)(buf + at);
		unsigned short len = e->d_reclen;
		if (!library_fd(e->d_name)) {
			if (to != at)
				memmove(buf + to, buf + at, len);
			to += len;
		}
		at += len;
	}
	return to;
}

SFS_EXPORT ssize_t getdents64(int fd, void *buf, size_t len)
{
	sfs_init();
	ssize_t n = SFS_REAL(getdents64)(fd, buf, len);
	if (n <= 0 || !lists_own_fds(fd))
		return n;
	/* A read whose entries were all the library's is not the end: 0
	 * would tell the caller it is. */
	while (n > 0 && (n = drop_library_fds(buf, n)) == 0)
		n = SFS_REAL(getdents64)(fd, buf, len);
	return n;
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
