/* SPDX-License-Identifier: Apache-2.0 */
/* splitfs: run programs on SplitFS and manage the file systems they use. */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static const char usage[] =
	"usage: splitfs <command> [args]\n"
	"\n"
	"  run --root DIR [--mode posix|sync|strict] [--relink auto|exchange|clone|copy]\n"
	"      [--stats] [--stats-file FILE] [--verbose] [--map-size N] [--staging-size N]\n"
	"      [--staging-files N] [--log-size N] [--cold-min N] [--no-staging]\n"
	"      -- CMD [ARGS...]\n"
	"        run CMD with libsplitfs.so preloaded, managing the files under DIR\n"
	"  image up DIR [--size SIZE] [--fs xfs|ext4|btrfs|tmpfs]\n"
	"        make a fresh file system backed by /dev/shm and mount it at DIR\n"
	"        (xfs: reflink and exchange-range enabled; needs root)\n"
	"  image down DIR\n"
	"        unmount an image made by 'image up' and delete its backing file\n"
	"  recover --root DIR [--quiet]\n"
	"        replay the operation logs of dead processes\n"
	"  version\n";

void cli_err(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "splitfs: %s\n", line);
}

int cli_spawn(char *const argv[], bool quiet)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (quiet && !freopen("/dev/null", "w", stdout))
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "splitfs: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int cli_self_dir(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	if (snprintf(buf, len, "%s", dirname(exe)) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "image") == 0)
		return cmd_image(argc - 1, argv + 1);
	if (strcmp(argv[1], "recover") == 0)
		return cmd_recover(argc - 1, argv + 1);
	if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("splitfs %s\n", SFS_VERSION);
		return 0;
	}
	cli_err("unknown command '%s' (try 'splitfs help')", argv[1]);
	return EXIT_USAGE;
}
