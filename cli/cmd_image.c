/* SPDX-License-Identifier: Apache-2.0 */
/* splitfs image up|down: the built-in default file system for demos, tests
 * and benchmarks. The backing file lives in /dev/shm (DRAM speed with real
 * journaling and extents); a marker in DIR/.splitfs/image names it, so
 * 'image down' only ever unmounts what 'image up' made. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/staging/census.h"
#include "../src/util/options.h"
#include "cli.h"
#include "xfs_feature.h"

#define MARKER ".splitfs/image"

/* /dev/shm/splitfs-<path with / turned into ->.img */
static void backing_path(const char *dir, char *out, size_t len)
{
	char name[200]; /* a file name, well under NAME_MAX */
	size_t n = 0;
	for (const char *p = dir; *p && n + 1 < sizeof(name); p++)
		if (!(*p == '/' && (n == 0 || name[n - 1] == '-')))
			name[n++] = *p == '/' ? '-' : *p;
	while (n > 0 && name[n - 1] == '-')
		n--;
	name[n] = '\0';
	snprintf(out, len, "/dev/shm/splitfs-%s.img", n ? name : "root");
}

static bool is_mountpoint(const char *dir)
{
	struct stat a, b;
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%s/..", dir);
	return stat(dir, &a) == 0 && stat(parent, &b) == 0 &&
	       (a.st_dev != b.st_dev || a.st_ino == b.st_ino);
}

static int make_fs(const char *fs, const char *img)
{
	char *xfs[] = {"mkfs.xfs", "-q", "-f", "-m", "reflink=1,crc=1", (char *)img, NULL};
	char *ext4[] = {"mkfs.ext4", "-q", "-F", (char *)img, NULL};
	char *btrfs[] = {"mkfs.btrfs", "-q", "-f", (char *)img, NULL};
	char **argv = strcmp(fs, "xfs") == 0 ? xfs : strcmp(fs, "ext4") == 0 ? ext4 : btrfs;
	int st = cli_spawn(argv, true);
	if (st == 127) { /* the shell's "command not found" */
		cli_err("image up: %s not found: install %s", argv[0],
			strcmp(fs, "xfs") == 0	? "xfsprogs" :
			strcmp(fs, "ext4") == 0 ? "e2fsprogs" :
						  "btrfs-progs");
		return -1;
	}
	if (st != 0) {
		cli_err("image up: %s failed (exit %d; its message is above)", argv[0], st);
		return -1;
	}
	if (strcmp(fs, "xfs") == 0) {
		int rc = xfs_enable_exchange(img);
		if (rc) {
			cli_err("image up: %s: cannot enable exchange-range: %s", img,
				strerror(-rc));
			return -1;
		}
	}
	return 0;
}

static int write_marker(const char *dir, const char *fs, const char *img)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/.splitfs", dir);
	if (mkdir(path, 01777) != 0 && errno != EEXIST)
		return -1;
	chmod(path, 01777);
	chmod(dir, 01777); /* any user may use the image, as /tmp */
	snprintf(path, sizeof(path), "%s/" MARKER, dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "fs=%s\nbacking=%s\n", fs, img);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		fclose(f);
		return -1;
	}
	if (fclose(f) != 0)
		return -1;
	/* Durable, names included: the crash tests cut the image's power. */
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	snprintf(path, sizeof(path), "%s/.splitfs", dir);
	int pfd = open(path, O_RDONLY | O_DIRECTORY);
	int rc = fd >= 0 && pfd >= 0 && fsync(pfd) == 0 && fsync(fd) == 0 ? 0 : -1;
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	return rc;
}

static int image_up(const char *dir, const char *fs, const char *size)
{
	uint64_t bytes;
	if (sfs_parse_size(size, &bytes) != 0 || bytes < (64u << 20)) {
		cli_err("image up: --size %s: expected a size of at least 64M (e.g. 2G)", size);
		return EXIT_USAGE;
	}
	/* mkfs's own minimums (xfsprogs: 300 MB; btrfs-progs: 114 MiB). */
	uint64_t least = strcmp(fs, "xfs") == 0	  ? 300u << 20 :
			 strcmp(fs, "btrfs") == 0 ? 120u << 20 :
						    0;
	if (bytes < least) {
		cli_err("image up: --size %s is too small for %s (at least %lluM; e.g. --size 512M)",
			size, fs, (unsigned long long)((least + (1 << 20) - 1) >> 20));
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		cli_err("image up: must run as root (it makes a loop device and mounts it)");
		return 1;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		cli_err("image up: %s: %s", dir, strerror(errno));
		return 1;
	}
	char abs[PATH_MAX];
	if (!realpath(dir, abs)) {
		cli_err("image up: %s: %s", dir, strerror(errno));
		return 1;
	}
	if (is_mountpoint(abs)) {
		cli_err("image up: %s is already a mount point", abs);
		return 1;
	}
	char img[PATH_MAX], opts[64];
	int rc;
	if (strcmp(fs, "tmpfs") == 0) {
		snprintf(opts, sizeof(opts), "size=%llu", (unsigned long long)bytes);
		if (mount("splitfs", abs, "tmpfs", 0, opts) != 0) {
			cli_err("image up: mount tmpfs on %s: %s", abs, strerror(errno));
			return 1;
		}
		snprintf(img, sizeof(img), "none");
	} else {
		backing_path(abs, img, sizeof(img));
		unlink(img);
		if (truncate(img, 0) != 0 && errno != ENOENT) {
			cli_err("image up: %s: %s", img, strerror(errno));
			return 1;
		}
		FILE *f = fopen(img, "w");
		if (!f || ftruncate(fileno(f), (off_t)bytes) != 0 || fclose(f) != 0) {
			cli_err("image up: %s: %s", img, strerror(errno));
			return 1;
		}
		if (make_fs(fs, img) != 0) {
			unlink(img);
			return 1;
		}
		char *argv[] = {"mount", "-o", "loop", img, abs, NULL};
		if ((rc = cli_spawn(argv, false)) != 0) {
			cli_err("image up: mount -o loop %s %s failed (exit %d)", img, abs, rc);
			unlink(img);
			return 1;
		}
	}
	if (write_marker(abs, fs, img) != 0) {
		cli_err("image up: %s/.splitfs: %s", abs, strerror(errno));
		return 1;
	}
	printf("%s: %s image mounted (backing file %s)\n", abs, fs, img);
	return 0;
}

/* The image's census identity (src/staging/census.h) from its .splitfs:
 * what follows the device in a segment's name (".<ino>.<btime>"), and its
 * device; false where there is none. */
static bool census_identity(const char *dir, char *tail, size_t n, dev_t *dev)
{
	char priv[PATH_MAX + 16], full[96];
	snprintf(priv, sizeof(priv), "%s/.splitfs", dir);
	struct statx stx;
	if (statx(AT_FDCWD, priv, AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_BTIME, &stx) != 0)
		return false;
	*dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	sfs_census_suffix(full, sizeof(full), *dev, stx.stx_ino, sfs_census_btime_ns(&stx));
	snprintf(tail, n, "%s", strchr(full + 1, '.')); /* ".<dev>.<ino>.<btime>" */
	return true;
}

/* Whether a file system on the device is mounted anywhere (a bind mount, a
 * copy of the image mounted from another loop device). */
static bool dev_mounted(dev_t dev)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return true; /* unknown: keep its segments */
	char line[4096];
	unsigned ma, mi;
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*u %*u %u:%u", &ma, &mi) == 2 && makedev(ma, mi) == dev;
	fclose(f);
	return found;
}

/* Removes every user's census segment of the unmounted file system: all
 * of the device it was on, once that holds no file system (also those of
 * a root below the image's top, `splitfs run --root DIR/sub`, whose
 * .splitfs is another), and those a remount from another loop device
 * left, whose device holds no file system now. A segment whose device is
 * mounted (a copy of the image, the same .splitfs identity) stays. */
static void remove_census(const char *tail, dev_t dev)
{
	bool dev_free = !dev_mounted(dev);
	size_t tl = strlen(tail), pl = strlen(SFS_CENSUS_PREFIX);
	DIR *d = opendir("/dev/shm");
	if (!d)
		return;
	const struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		const char *name = de->d_name;
		size_t len = strlen(name);
		/* prefix, then "<uid>.<dev>.<ino>.<btime>", digits only */
		if (len <= pl || strncmp(name, SFS_CENSUS_PREFIX, pl) != 0 ||
		    strspn(name + pl, "0123456789.") != len - pl)
			continue;
		unsigned long long uid, sdev, ino, btime;
		int end = 0;
		if (sscanf(name + pl, "%llu.%llu.%llu.%llu%n", &uid, &sdev, &ino, &btime, &end) !=
			    4 ||
		    (size_t)end != len - pl)
			continue;
		bool same_fs = len > tl && strcmp(name + len - tl, tail) == 0;
		bool stale = (dev_t)sdev == dev ? dev_free : same_fs && !dev_mounted((dev_t)sdev);
		if (stale)
			unlinkat(dirfd(d), name, 0);
	}
	closedir(d);
}

static int image_down(const char *dir)
{
	char abs[PATH_MAX], marker[PATH_MAX + 32], line[PATH_MAX + 16], img[PATH_MAX] = "";
	if (!realpath(dir, abs)) {
		cli_err("image down: %s: %s", dir, strerror(errno));
		return 1;
	}
	snprintf(marker, sizeof(marker), "%s/" MARKER, abs);
	FILE *f = is_mountpoint(abs) ? fopen(marker, "r") : NULL;
	if (!f) {
		cli_err("image down: %s is not a SplitFS image (no %s)", abs, MARKER);
		return 1;
	}
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "backing=", 8) == 0)
			snprintf(img, sizeof(img), "%.*s", (int)strcspn(line + 8, "\n"), line + 8);
	fclose(f);
	if (geteuid() != 0) {
		cli_err("image down: must run as root");
		return 1;
	}
	char census[96];
	dev_t dev = 0;
	bool counted = census_identity(abs, census, sizeof(census), &dev);
	if (umount(abs) != 0) {
		cli_err("image down: umount %s: %s", abs, strerror(errno));
		return 1;
	}
	if (counted)
		remove_census(census, dev);
	if (strncmp(img, "/dev/shm/splitfs-", 17) == 0 && unlink(img) != 0 && errno != ENOENT) {
		cli_err("image down: %s: %s", img, strerror(errno));
		return 1;
	}
	printf("%s: unmounted%s%s\n", abs, img[0] && strcmp(img, "none") ? ", removed " : "",
	       strcmp(img, "none") ? img : "");
	return 0;
}

#define IMAGE_USAGE                                                                                \
	"usage: splitfs image up DIR [--size SIZE] [--fs xfs|ext4|btrfs|tmpfs]"                    \
	" | splitfs image down DIR"

int cmd_image(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			puts(IMAGE_USAGE);
			return 0;
		}
	}
	if (argc < 3) {
		cli_err("image: " IMAGE_USAGE);
		return EXIT_USAGE;
	}
	const char *verb = argv[1], *dir = argv[2];
	if (dir[0] == '-') { /* an option where DIR belongs: never a mount point named so */
		cli_err("image %s: expected DIR before options, got '%s' (" IMAGE_USAGE ")", verb,
			dir);
		return EXIT_USAGE;
	}
	if (strcmp(verb, "down") == 0) {
		if (argc != 3) {
			cli_err("image down: unexpected argument '%s'", argv[3]);
			return EXIT_USAGE;
		}
		return image_down(dir);
	}
	if (strcmp(verb, "up") != 0) {
		cli_err("image: unknown action '%s' (up or down)", verb);
		return EXIT_USAGE;
	}
	const char *fs = "xfs", *size = "4G";
	for (int i = 3; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--size") == 0)
			size = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--fs") == 0)
			fs = argv[++i];
		else {
			cli_err("image up: unknown or incomplete option '%s'", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (strcmp(fs, "xfs") && strcmp(fs, "ext4") && strcmp(fs, "btrfs") && strcmp(fs, "tmpfs")) {
		cli_err("image up: --fs %s: expected xfs|ext4|btrfs|tmpfs", fs);
		return EXIT_USAGE;
	}
	return image_up(dir, fs, size);
}
