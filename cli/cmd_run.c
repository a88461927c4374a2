/* SPDX-License-Identifier: Apache-2.0 */
/* splitfs run: validate the options exactly as the library will (same
 * table), export them as SPLITFS_* variables, preload the library, exec. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/util/options.h"
#include "cli.h"

/* --flag -> option name; flags without a value set the option to "1". */
static const struct {
	const char *flag;
	const char *option;
	bool takes_value;
} flags[] = {
	{"--root", "root", true},
	{"--mode", "mode", true},
	{"--relink", "relink", true},
	{"--map-size", "map_size", true},
	{"--staging-files", "staging_files", true},
	{"--staging-size", "staging_size", true},
	{"--log-size", "log_size", true},
	{"--cold-min", "cold_min", true},
	{"--no-staging", "staging", false},
	{"--stats", "stats", false},
	{"--stats-file", "stats_file", true},
	{"--verbose", "verbose", false},
};

static int preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1);
	if (strstr(old, lib))
		return 0;
	/* After what is there: an ASan runtime, say, must stay first. */
	char *both;
	if (asprintf(&both, "%s:%s", old, lib) < 0)
		return -1;
	int r = setenv("LD_PRELOAD", both, 1);
	free(both);
	return r;
}

int cmd_run(int argc, char **argv)
{
	struct sfs_options o;
	char err[PATH_MAX + 128];
	/* Start from the environment (SPLITFS_* already set), then flags. */
	if (sfs_options_load(&o, err, sizeof(err)) != 0) {
		cli_err("run: %s", err);
		return EXIT_USAGE;
	}
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		size_t k = 0;
		while (k < sizeof(flags) / sizeof(flags[0]) && strcmp(argv[i], flags[k].flag) != 0)
			k++;
		if (k == sizeof(flags) / sizeof(flags[0])) {
			if (argv[i][0] != '-')
				break; /* the command, without "--" */
			cli_err("run: unknown option '%s'", argv[i]);
			return EXIT_USAGE;
		}
		const char *value = strcmp(flags[k].flag, "--no-staging") == 0 ? "0" : "1";
		if (flags[k].takes_value) {
			if (++i >= argc) {
				cli_err("run: %s needs a value", flags[k].flag);
				return EXIT_USAGE;
			}
			value = argv[i];
		}
		char abs[PATH_MAX];
		if (strcmp(flags[k].option, "root") == 0) {
			if (!realpath(value, abs)) {
				cli_err("run: --root %s: %s", value, strerror(errno));
				return 1;
			}
			value = abs;
		}
		if (sfs_option_set(&o, flags[k].option, value, err, sizeof(err)) != 0) {
			cli_err("run: %s", err);
			return EXIT_USAGE;
		}
		if (setenv(sfs_option_env_name(flags[k].option), value, 1) != 0)
			return 1;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		cli_err("run: no command given (splitfs run --root DIR -- CMD [ARGS...])");
		return EXIT_USAGE;
	}
	struct stat st;
	if (!o.root[0]) {
		cli_err("run: --root DIR is required (or SPLITFS_ROOT)");
		return EXIT_USAGE;
	}
	if (stat(o.root, &st) != 0 || !S_ISDIR(st.st_mode)) {
		cli_err("run: --root %s: %s", o.root, errno ? strerror(errno) : "not a directory");
		return 1;
	}
	char lib[PATH_MAX];
	if (cli_find_library(lib, sizeof(lib)) != 0)
		return 1;
	if (preload(lib) != 0)
		return 1;
	execvp(argv[i], argv + i);
	cli_err("run: %s: %s", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
