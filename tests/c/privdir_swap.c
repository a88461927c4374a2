/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the library opens its descriptor of <root>/.splitfs at its
 * first use, after the start checked the directory (src/sys/self.h); it
 * must then still be the directory the start checked. The test starts the
 * library (an open), then puts another directory in .splitfs's place, as
 * another user who could rename it would, and appends to a file: the
 * appends must all be in the file, and nothing of this process may appear
 * in the impostor (no staging store, no log). The real directory is put
 * back at the end. Skips without the right to rename .splitfs. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

#define LEN 4096
#define NBLK 64

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	const char *root = getenv("SPLITFS_ROOT");
	if (!root || !*root)
		root = dir; /* without the library: a directory of the test's own */
	char priv[4096], moved[4096];
	snprintf(priv, sizeof(priv), "%s/.splitfs", root);
	snprintf(moved, sizeof(moved), "%s/.splitfs.privdir_swap", root);
	bool own = root == dir && mkdir(priv, 01777) == 0;
	char *path = strdup(t_path(dir, "swap.dat"));
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_REQUIRE(fd >= 0, "open");
	if (rename(priv, moved) != 0) {
		printf("skip: cannot rename %s (%s)\n", priv, strerror(errno));
		close(fd);
		unlink(path);
		return T_EXIT_SKIP;
	}
	bool made = mkdir(priv, 01777) == 0;
	T_CHECK(made, "mkdir the impostor");
	unsigned char buf[LEN];
	for (int b = 0; b < NBLK; b++) {
		t_fill(buf, LEN, 4, (long)b * LEN);
		T_CHECK(write(fd, buf, LEN) == LEN, "append %d", b);
	}
	T_CHECK(fsync(fd) == 0, "fsync");
	int in_impostor = made ? entries(priv) : 0;
	T_CHECK(in_impostor == 0, "%d entries of this process in the impostor", in_impostor);
	/* The real one back before anything else can fail. */
	if (made) {
		DIR *d = opendir(priv);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(dirfd(d), e->d_name, 0);
		if (d)
			closedir(d);
		rmdir(priv);
	}
	T_REQUIRE(rename(moved, priv) == 0, "put %s back", priv);
	T_CHECK(t_kernel_holds_stream(path, (long)LEN * NBLK, 4),
		"the appends, through the kernel");
	close(fd);
	unlink(path);
	free(path);
	if (own)
		rmdir(priv);
	return t_result();
}
