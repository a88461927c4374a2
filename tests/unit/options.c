/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the SPLITFS_* option parser (src/util/options.c): every
 * default, each option read from the environment, sizes with their
 * suffixes, bounds and power-of-two rules, booleans, enums, the exact
 * one-line errors, unknown names, and the per-option lines that
 * SPLITFS_VERBOSE prints. Links options.o and msg.o. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../src/util/msg.h"
#include "../../src/util/options.h"
#include "unit.h"

#define MIB (1ull << 20)

static const char *const envs[] = {
	"SPLITFS_ROOT",		"SPLITFS_MODE",	    "SPLITFS_MAP_SIZE",	  "SPLITFS_STAGING_FILES",
	"SPLITFS_STAGING_SIZE", "SPLITFS_LOG_SIZE", "SPLITFS_RELINK",	  "SPLITFS_STAGING",
	"SPLITFS_PROTECT",	"SPLITFS_STATS",    "SPLITFS_STATS_FILE", "SPLITFS_VERBOSE",
	"SPLITFS_SHARE",	"SPLITFS_COLD_MIN", "SPLITFS_LOGSYNC",
};

static void clear_env(void)
{
	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++)
		unsetenv(envs[i]);
}

U_TEST(defaults, "every option's default with no SPLITFS_* set")
{
	clear_env();
	struct sfs_options o;
	char err[256] = "";
	U_REQUIRE(sfs_options_load(&o, err, sizeof(err)) == 0, "load: %s", err);
	U_CHECK(o.root[0] == '\0', "root \"%s\"", o.root);
	U_CHECK(o.mode == SFS_MODE_POSIX, "mode %d", o.mode);
	U_CHECK(o.map_size == 2 * MIB, "map_size %llu", (unsigned long long)o.map_size);
	U_CHECK(o.staging_files == 4, "staging_files %llu", (unsigned long long)o.staging_files);
	U_CHECK(o.staging_size == 8 * MIB, "staging_size %llu", (unsigned long long)o.staging_size);
	U_CHECK(o.log_size == 0, "log_size %llu (the mode's)", (unsigned long long)o.log_size);
	U_CHECK(o.cold_min == 0, "cold_min %llu", (unsigned long long)o.cold_min);
	U_CHECK(o.relink == SFS_RELINK_AUTO, "relink %d", o.relink);
	U_CHECK(o.staging && !o.protect && !o.stats && !o.verbose && o.share && o.logsync,
		"booleans %d %d %d %d %d %d", o.staging, o.protect, o.stats, o.verbose, o.share,
		o.logsync);
	U_CHECK(o.stats_file[0] == '\0', "stats_file \"%s\"", o.stats_file);
}

U_TEST(environment, "each SPLITFS_* variable read into its field")
{
	clear_env();
	setenv("SPLITFS_ROOT", "/mnt/pmem", 1);
	setenv("SPLITFS_MODE", "strict", 1);
	setenv("SPLITFS_MAP_SIZE", "4MiB", 1);
	setenv("SPLITFS_STAGING_FILES", "256", 1);
	setenv("SPLITFS_STAGING_SIZE", "64k", 1);
	setenv("SPLITFS_LOG_SIZE", "1G", 1);
	setenv("SPLITFS_COLD_MIN", "48M", 1);
	setenv("SPLITFS_RELINK", "copy", 1);
	setenv("SPLITFS_STAGING", "off", 1);
	setenv("SPLITFS_PROTECT", "YES", 1);
	setenv("SPLITFS_SHARE", "no", 1);
	setenv("SPLITFS_LOGSYNC", "0", 1);
	setenv("SPLITFS_STATS", "true", 1);
	setenv("SPLITFS_STATS_FILE", "/tmp/s.json", 1);
	setenv("SPLITFS_VERBOSE", "On", 1);
	struct sfs_options o;
	char err[256] = "";
	int rc = sfs_options_load(&o, err, sizeof(err));
	clear_env();
	U_REQUIRE(rc == 0, "load: %s", err);
	U_CHECK(strcmp(o.root, "/mnt/pmem") == 0, "root \"%s\"", o.root);
	U_CHECK(o.mode == SFS_MODE_STRICT, "mode %d", o.mode);
	U_CHECK(o.map_size == 4 * MIB, "map_size %llu", (unsigned long long)o.map_size);
	U_CHECK(o.staging_files == 256, "staging_files");
	U_CHECK(o.staging_size == 64 << 10, "staging_size %llu",
		(unsigned long long)o.staging_size);
	U_CHECK(o.log_size == 1ull << 30, "log_size %llu", (unsigned long long)o.log_size);
	U_CHECK(o.cold_min == 48 * MIB, "cold_min %llu", (unsigned long long)o.cold_min);
	U_CHECK(o.relink == SFS_RELINK_COPY, "relink %d", o.relink);
	U_CHECK(!o.staging && o.protect && o.stats && o.verbose && !o.share && !o.logsync,
		"booleans");
	U_CHECK(strcmp(o.stats_file, "/tmp/s.json") == 0, "stats_file \"%s\"", o.stats_file);
}

U_TEST(sizes, "size syntax: K/M/G/T, iB/B, overflow, junk")
{
	static const struct {
		const char *s;
		int rc;
		uint64_t v;
	} t[] = {
		{"0", 0, 0},
		{"4096", 0, 4096},
		{"64K", 0, 64 << 10},
		{"64k", 0, 64 << 10},
		{"2M", 0, 2 * MIB},
		{"2MiB", 0, 2 * MIB},
		{"2mb", 0, 2 * MIB},
		{"1g", 0, 1ull << 30},
		{"3T", 0, 3ull << 40},
		{"16777215T", 0, 16777215ull << 40},
		{"16777216T", -ERANGE, 0},
		{"18446744073709551615", 0, UINT64_MAX},
		{"18446744073709551616", -ERANGE, 0},
		{"", -EINVAL, 0},
		{"K", -EINVAL, 0},
		{"-1", -EINVAL, 0},
		{" 1", -EINVAL, 0},
		{"12X", -EINVAL, 0},
		{"2Mx", -EINVAL, 0},
		{"2MiBs", -EINVAL, 0},
		{"1.5M", -EINVAL, 0},
		{"2 M", -EINVAL, 0},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t v = 12345;
		int rc = sfs_parse_size(t[i].s, &v);
		U_CHECK(rc == t[i].rc, "\"%s\": rc %d, want %d", t[i].s, rc, t[i].rc);
		U_CHECK(rc ? v == 12345 : v == t[i].v, "\"%s\": %llu, want %llu", t[i].s,
			(unsigned long long)v, (unsigned long long)t[i].v);
	}
}

/* Each bad value gives -EINVAL, the exact message, and leaves o alone. */
U_TEST(errors, "bounds, power of two, enums, bools: exact messages")
{
	static const struct {
		const char *name, *value, *msg;
	} t[] = {
		{"mode", "fast", "SPLITFS_MODE=fast: expected posix|sync|strict"},
		{"mode", "Sync", "SPLITFS_MODE=Sync: expected posix|sync|strict"},
		{"relink", "link", "SPLITFS_RELINK=link: expected auto|exchange|clone|copy"},
		{"map_size", "3M", "SPLITFS_MAP_SIZE=3M: must be a power of two"},
		{"map_size", "2K", "SPLITFS_MAP_SIZE=2K: out of range [4096, 1073741824]"},
		{"map_size", "2G", "SPLITFS_MAP_SIZE=2G: out of range [4096, 1073741824]"},
		{"map_size", "big",
		 "SPLITFS_MAP_SIZE=big: expected a size such as 4096, 64K, 2M, 1G"},
		{"staging_files", "0", "SPLITFS_STAGING_FILES=0: out of range [1, 256]"},
		{"staging_files", "257", "SPLITFS_STAGING_FILES=257: out of range [1, 256]"},
		{"staging_files", "4K", "SPLITFS_STAGING_FILES=4K: expected a whole number"},
		{"staging_size", "63K",
		 "SPLITFS_STAGING_SIZE=63K: out of range [65536, 68719476736]"},
		{"log_size", "17G", "SPLITFS_LOG_SIZE=17G: out of range [65536, 17179869184]"},
		{"staging", "maybe", "SPLITFS_STAGING=maybe: expected 0|1|yes|no|on|off"},
		{"nosuch", "1", "unknown option 'nosuch'"},
	};
	clear_env();
	struct sfs_options o, before;
	char err[256];
	U_REQUIRE(sfs_options_load(&o, err, sizeof(err)) == 0, "load: %s", err);
	before = o;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		err[0] = '\0';
		int rc = sfs_option_set(&o, t[i].name, t[i].value, err, sizeof(err));
		U_CHECK(rc == -EINVAL, "%s=%s: rc %d", t[i].name, t[i].value, rc);
		U_CHECK(strcmp(err, t[i].msg) == 0, "%s=%s: \"%s\", want \"%s\"", t[i].name,
			t[i].value, err, t[i].msg);
	}
	U_CHECK(memcmp(&o, &before, sizeof(o)) == 0, "a rejected value changed the options");
	char longp[PATH_MAX + 8];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	U_CHECK(sfs_option_set(&o, "root", longp, err, sizeof(err)) == -EINVAL &&
			strcmp(err, "SPLITFS_ROOT: path too long") == 0,
		"long root: \"%s\"", err);
	/* A bad variable fails the whole load, naming it. */
	setenv("SPLITFS_MODE", "fast", 1);
	int rc = sfs_options_load(&o, err, sizeof(err));
	clear_env();
	U_CHECK(rc == -EINVAL && strstr(err, "SPLITFS_MODE=fast") != NULL, "load: %d \"%s\"", rc,
		err);
}

U_TEST(names, "variable names, mode/relink names, boolean spellings")
{
	U_CHECK(strcmp(sfs_option_env_name("map_size"), "SPLITFS_MAP_SIZE") == 0, "map_size");
	U_CHECK(strcmp(sfs_option_env_name("stats_file"), "SPLITFS_STATS_FILE") == 0, "stats_file");
	U_CHECK(sfs_option_env_name("MODE") == NULL, "names are lower case");
	U_CHECK(sfs_option_env_name("nosuch") == NULL, "unknown");
	U_CHECK(strcmp(sfs_mode_name(SFS_MODE_SYNC), "sync") == 0, "mode name");
	U_CHECK(strcmp(sfs_mode_name(3), "?") == 0 && strcmp(sfs_mode_name(-1), "?") == 0,
		"mode out of range");
	U_CHECK(strcmp(sfs_relink_name(SFS_RELINK_CLONE), "clone") == 0, "relink name");
	U_CHECK(strcmp(sfs_relink_name(4), "?") == 0, "relink out of range");
	const char *yes[] = {"1", "yes", "ON", "True"}, *no[] = {"0", "no", "Off", "FALSE", ""};
	struct sfs_options o;
	char err[128];
	for (size_t i = 0; i < 4; i++)
		U_CHECK(sfs_option_set(&o, "stats", yes[i], err, sizeof(err)) == 0 && o.stats,
			"\"%s\" is true", yes[i]);
	for (size_t i = 0; i < 5; i++)
		U_CHECK(sfs_option_set(&o, "stats", no[i], err, sizeof(err)) == 0 && !o.stats,
			"\"%s\" is false", no[i]);
}

/* SPLITFS_VERBOSE's listing: one line per option, value and source. */
U_TEST(print, "SPLITFS_VERBOSE lines: value and env|default")
{
	clear_env();
	setenv("SPLITFS_MODE", "sync", 1);
	setenv("SPLITFS_LOG_SIZE", "64K", 1);
	struct sfs_options o;
	char err[128];
	int rc = sfs_options_load(&o, err, sizeof(err));
	U_REQUIRE(rc == 0, "load: %s", err);
	int p[2];
	U_REQUIRE(pipe(p) == 0, "pipe");
	sfs_msg_set_fd(p[1]);
	sfs_options_print(&o);
	sfs_msg_set_fd(2);
	close(p[1]);
	clear_env();
	char out[4096];
	ssize_t n = read(p[0], out, sizeof(out) - 1);
	close(p[0]);
	U_REQUIRE(n > 0, "nothing printed");
	out[n] = '\0';
	static const char *const want[] = {
		"splitfs: option 'root': \"\" (default)\n",
		"splitfs: option 'mode': sync (env)\n",
		"splitfs: option 'map_size': 2097152 (default)\n",
		"splitfs: option 'log_size': 65536 (env)\n",
		"splitfs: option 'relink': auto (default)\n",
		"splitfs: option 'staging': 1 (default)\n",
		"splitfs: option 'share': 1 (default)\n",
		"splitfs: option 'logsync': 1 (default)\n",
		"splitfs: option 'cold_min': 0 (default)\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		U_CHECK(strstr(out, want[i]) != NULL, "missing line %.*s", (int)strlen(want[i]) - 1,
			want[i]);
	int lines = 0;
	for (char *c = out; *c; c++)
		lines += *c == '\n';
	U_CHECK(lines == 15, "%d lines, want one per option (15)", lines);
}
