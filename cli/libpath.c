/* SPDX-License-Identifier: Apache-2.0 */
/* Where `splitfs run` finds the library it preloads. This file is compiled
 * twice (Makefile): for build/splitfs without install paths, so the build
 * tree's CLI only ever preloads the libsplitfs.so next to it; for the
 * installed CLI (`make install`) with SFS_BINDIR, SFS_LIBDIR and SFS_SONAME,
 * so it also finds LIBDIR/libsplitfs.so.N: first under the root the program
 * itself was installed under (a tree staged with DESTDIR, or moved whole,
 * uses its own library), then at LIBDIR itself. DESTDIR is never compiled
 * in. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* lib = dir + sub + "/" + name; true if that file is readable. */
static bool readable(char *lib, size_t len, const char *dir, const char *sub, const char *name)
{
	int n = snprintf(lib, len, "%s%s/%s", dir, sub, name);
	return n > 0 && (size_t)n < len && access(lib, R_OK) == 0;
}

int cli_find_library(char *lib, size_t len)
{
	char dir[PATH_MAX];
	int rc = cli_self_dir(dir, sizeof(dir));
	if (rc) {
		cli_err("run: cannot find this program's directory: %s", strerror(-rc));
		return rc;
	}
	if (readable(lib, len, dir, "", "libsplitfs.so"))
		return 0;
#ifdef SFS_LIBDIR
	/* The program is ROOT + BINDIR: its library is ROOT + LIBDIR. */
	size_t n = strlen(dir), b = strlen(SFS_BINDIR);
	if (n > b && strcmp(dir + n - b, SFS_BINDIR) == 0) {
		dir[n - b] = '\0';
		if (readable(lib, len, dir, SFS_LIBDIR, SFS_SONAME))
			return 0;
	}
	if (readable(lib, len, "", SFS_LIBDIR, SFS_SONAME))
		return 0;
	cli_err("run: libsplitfs.so not found next to this program nor at %s/%s", SFS_LIBDIR,
		SFS_SONAME);
#else
	cli_err("run: libsplitfs.so not found next to this program");
#endif
	return -ENOENT;
}
