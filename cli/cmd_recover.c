/* SPDX-License-Identifier: Apache-2.0 */
/* splitfs recover --root DIR: replays the operation logs (sync and strict
 * modes, POSIX mode's served fdatasync) of processes that died, so the
 * files hold every write those processes acknowledged. Safe to run at any
 * time: logs of live processes are left alone, and replay is idempotent. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/oplog/recover.h"
#include "../src/staging/adopt.h"
#include "cli.h"
#include "libc_sys.h"

int cmd_recover(int argc, char **argv)
{
	const char *root = NULL;
	bool quiet = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
			root = argv[++i];
		else if (strcmp(argv[i], "--quiet") == 0)
			quiet = true;
		else {
			cli_err("recover: unknown option '%s' (splitfs recover --root DIR)",
				argv[i]);
			return EXIT_USAGE;
		}
	}
	if (!root && !(root = getenv("SPLITFS_ROOT"))) {
		cli_err("recover: --root DIR is required");
		return EXIT_USAGE;
	}
	char abs[PATH_MAX], priv[PATH_MAX + 16];
	if (!realpath(root, abs)) {
		cli_err("recover: %s: %s", root, strerror(errno));
		return 1;
	}
	snprintf(priv, sizeof(priv), "%s/.splitfs", abs);
	/* The staging windows of processes that died on this mount (POSIX
	 * mode's unsynced appends), then the operation logs. */
	struct sfs_recovery stores;
	memset(&stores, 0, sizeof(stores));
	/* Root recovers every user's processes, each into that user's own
	 * files (recover.h). */
	struct sfs_recover_env env = {
		.sys = &cli_libc_sys, .euid = geteuid(), .all_users = true, .root_fd = -1};
	int dfd = open(priv, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat rst;
	if (dfd < 0) {
		if (errno == ENOENT) {
			if (!quiet)
				printf("%s: nothing to recover (no .splitfs)\n", abs);
			return 0;
		}
		cli_err("recover: %s: %s", priv, strerror(errno));
		return 1;
	}
	int rc = fstat(dfd, &rst) == 0 ?
			 sfs_mount_instance(&cli_libc_sys, dfd, env.boot_id, &env.mnt_id) :
			 -errno;
	if (rc) {
		cli_err("recover: %s: %s", priv, strerror(-rc));
		close(dfd);
		return 1;
	}
	env.root_dev = rst.st_dev;
	env.root_fd = dfd;
	sfs_adopt_dir(&env, dfd, &stores);
	struct sfs_recovery rep;
	rc = sfs_recover_dir(&env, priv, &rep);
	close(dfd);
	if (rc) {
		cli_err("recover: %s: %s", priv, strerror(-rc));
		return 1;
	}
	if (!quiet)
		printf("%s: %u staged windows of dead processes put back (%llu bytes), %u discarded, "
		       "%u kept as orphans; %u logs of dead processes, %u records replayed (%llu "
		       "bytes) into %u files, %u skipped, %.1f ms\n",
		       abs, stores.stores, (unsigned long long)stores.store_bytes, stores.discarded,
		       stores.orphaned, rep.logs, rep.records, (unsigned long long)rep.bytes,
		       rep.files, rep.skipped, (double)rep.ns / 1e6);
	if (stores.first_error[0])
		cli_err("recover: %s", stores.first_error);
	if (rep.first_error[0])
		cli_err("recover: %s", rep.first_error);
	return rep.first_error[0] || stores.first_error[0] ? 1 : 0;
}
