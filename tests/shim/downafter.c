/* SPDX-License-Identifier: Apache-2.0 */
/* A power cut right after a namespace change, for the crash suite's
 * "shutdown" test: preloaded after libsplitfs
 * (LD_PRELOAD=libsplitfs.so:downafter.so), it is the "real" rename,
 * unlink, mkdir and creating or truncating open the library calls. When
 * such a call succeeds on a path whose last component is
 * $SFS_SHIM_DOWN_NAME, it shuts the XFS file system at $SFS_SHIM_DOWN_FS
 * down without flushing its log (XFS_IOC_GOINGDOWN, NOLOGFLUSH): the
 * change is in memory only, as when the power fails the moment the call
 * returns. What the library does next to make the change durable (sync
 * and strict modes) then meets a file system that fails every call with
 * EIO, and the call must fail: it may not report a change that is gone. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* From xfs_fs.h (xfslibs-dev is not needed for two constants). */
#define SHIM_XFS_IOC_GOINGDOWN _IOR('X', 125, uint32_t)
#define SHIM_XFS_GOING_NOLOGFLUSH 2u

#define NEXT(ret, name, args) ((ret(*) args)dlsym(RTLD_NEXT, name))

static bool is_target(const char *path)
{
	const char *want = getenv("SFS_SHIM_DOWN_NAME");
	if (!want || !*want || !path)
		return false;
	const char *slash = strrchr(path, '/');
	return strcmp(slash ? slash + 1 : path, want) == 0;
}

/* Shuts the file system down once, after the first call on the target. */
static void down_after(int r, const char *path)
{
	static atomic_bool done;
	if (r < 0 || !is_target(path) || atomic_exchange(&done, true))
		return;
	const char *fs = getenv("SFS_SHIM_DOWN_FS");
	int (*open_next)(const char *, int, ...) = NEXT(int, "open", (const char *, int, ...));
	int fd = fs ? open_next(fs, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	uint32_t how = SHIM_XFS_GOING_NOLOGFLUSH;
	if (fd < 0 || ioctl(fd, SHIM_XFS_IOC_GOINGDOWN, &how) != 0)
		abort(); /* the test cannot stand for itself */
	close(fd);
}

int rename(const char *from, const char *to)
{
	int r = NEXT(int, "rename", (const char *, const char *))(from, to);
	down_after(r, to);
	return r;
}

int renameat(int fromdir, const char *from, int todir, const char *to)
{
	int r = NEXT(int, "renameat", (int, const char *, int, const char *))(fromdir, from, todir,
									      to);
	down_after(r, to);
	return r;
}

int renameat2(int fromdir, const char *from, int todir, const char *to, unsigned flags)
{
	int r = NEXT(int, "renameat2", (int, const char *, int, const char *, unsigned))(
		fromdir, from, todir, to, flags);
	down_after(r, to);
	return r;
}

int unlink(const char *path)
{
	int r = NEXT(int, "unlink", (const char *))(path);
	down_after(r, path);
	return r;
}

int unlinkat(int dir, const char *path, int flags)
{
	int r = NEXT(int, "unlinkat", (int, const char *, int))(dir, path, flags);
	down_after(r, path);
	return r;
}

int mkdir(const char *path, mode_t mode)
{
	int r = NEXT(int, "mkdir", (const char *, mode_t))(path, mode);
	down_after(r, path);
	return r;
}

int mkdirat(int dir, const char *path, mode_t mode)
{
	int r = NEXT(int, "mkdirat", (int, const char *, mode_t))(dir, path, mode);
	down_after(r, path);
	return r;
}

/* Opens that create or truncate: the change is the name or the size. */
static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

static int after_open(int fd, int flags, const char *path)
{
	if (flags & (O_CREAT | O_TRUNC))
		down_after(fd < 0 ? -1 : 0, path);
	return fd;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return after_open(NEXT(int, "open", (const char *, int, ...))(path, flags, mode), flags,
			  path);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return after_open(NEXT(int, "open64", (const char *, int, ...))(path, flags, mode), flags,
			  path);
}

int openat(int dir, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return after_open(
		NEXT(int, "openat", (int, const char *, int, ...))(dir, path, flags, mode), flags,
		path);
}

int openat64(int dir, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return after_open(
		NEXT(int, "openat64", (int, const char *, int, ...))(dir, path, flags, mode), flags,
		path);
}
