/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* environ */

#include "compiler.h"
#include "msg.h"

enum opt_kind { OPT_PATH, OPT_ENUM, OPT_SIZE, OPT_UINT, OPT_BOOL };

struct opt_row {
	const char *name; /* short name; the variable is SPLITFS_<NAME> */
	const char *env;
	enum opt_kind kind;
	size_t field;		    /* offsetof(struct sfs_options, ...) */
	const char *const *choices; /* OPT_ENUM: NULL-terminated, index = value */
	uint64_t min, max;	    /* OPT_SIZE / OPT_UINT bounds */
	bool pow2;		    /* OPT_SIZE must be a power of two */
};

static const char *const mode_names[] = {"posix", "sync", "strict", NULL};
static const char *const relink_names[] = {"auto", "exchange", "clone", "copy", NULL};

#define KIB (1ULL << 10)
#define MIB (1ULL << 20)
#define GIB (1ULL << 30)

/* The defaults, as values: parsing them from strings at every process
 * start took 15 us (the first call of each libc function through the PLT
 * is a symbol lookup). The paths' default is empty. */
static const struct sfs_options defaults = {
	.mode = SFS_MODE_POSIX,
	.map_size = 2 * MIB,
	.staging_files = 4,
	.staging_size = 8 * MIB,
	.log_size = 0, /* the mode's (oplog/logfile.h) */
	.cold_min = 0,
	.relink = SFS_RELINK_AUTO,
	.staging = true,
	.protect = false,
	.share = true,
	.logsync = true,
	.stats = false,
	.verbose = false,
};
/* The scalars are copied as one block: the paths come last. */
static_assert(offsetof(struct sfs_options, root) ==
			      offsetof(struct sfs_options, verbose) + sizeof(bool) &&
		      offsetof(struct sfs_options, stats_file) ==
			      offsetof(struct sfs_options, root) + PATH_MAX &&
		      sizeof(struct sfs_options) < offsetof(struct sfs_options, stats_file) +
							   PATH_MAX + sizeof(uint64_t),
	      "struct sfs_options: every scalar before root, nothing after stats_file");

static const struct opt_row rows[] = {
	{"root", "SPLITFS_ROOT", OPT_PATH, offsetof(struct sfs_options, root), NULL, 0, 0, false},
	{"mode", "SPLITFS_MODE", OPT_ENUM, offsetof(struct sfs_options, mode), mode_names, 0, 0,
	 false},
	{"map_size", "SPLITFS_MAP_SIZE", OPT_SIZE, offsetof(struct sfs_options, map_size), NULL,
	 4 * KIB, 1 * GIB, true},
	{"staging_files", "SPLITFS_STAGING_FILES", OPT_UINT,
	 offsetof(struct sfs_options, staging_files), NULL, 1, 256, false},
	{"staging_size", "SPLITFS_STAGING_SIZE", OPT_SIZE,
	 offsetof(struct sfs_options, staging_size), NULL, 64 * KIB, 64 * GIB, false},
	{"log_size", "SPLITFS_LOG_SIZE", OPT_SIZE, offsetof(struct sfs_options, log_size), NULL,
	 64 * KIB, 16 * GIB, false},
	{"cold_min", "SPLITFS_COLD_MIN", OPT_SIZE, offsetof(struct sfs_options, cold_min), NULL, 0,
	 1024 * 1024 * GIB, false},
	{"relink", "SPLITFS_RELINK", OPT_ENUM, offsetof(struct sfs_options, relink), relink_names,
	 0, 0, false},
	{"staging", "SPLITFS_STAGING", OPT_BOOL, offsetof(struct sfs_options, staging), NULL, 0, 0,
	 false},
	{"protect", "SPLITFS_PROTECT", OPT_BOOL, offsetof(struct sfs_options, protect), NULL, 0, 0,
	 false},
	{"share", "SPLITFS_SHARE", OPT_BOOL, offsetof(struct sfs_options, share), NULL, 0, 0,
	 false},
	{"logsync", "SPLITFS_LOGSYNC", OPT_BOOL, offsetof(struct sfs_options, logsync), NULL, 0, 0,
	 false},
	{"stats", "SPLITFS_STATS", OPT_BOOL, offsetof(struct sfs_options, stats), NULL, 0, 0,
	 false},
	{"stats_file", "SPLITFS_STATS_FILE", OPT_PATH, offsetof(struct sfs_options, stats_file),
	 NULL, 0, 0, false},
	{"verbose", "SPLITFS_VERBOSE", OPT_BOOL, offsetof(struct sfs_options, verbose), NULL, 0, 0,
	 false},
};

const char *sfs_mode_name(int mode)
{
	return mode >= 0 && mode < 3 ? mode_names[mode] : "?";
}

const char *sfs_relink_name(int kind)
{
	return kind >= 0 && kind < 4 ? relink_names[kind] : "?";
}

int sfs_parse_size(const char *s, uint64_t *out)
{
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	uint64_t mult = 1;
	switch (tolower((unsigned char)*end)) {
	case '\0':
		break;
	case 'k':
		mult = KIB;
		break;
	case 'm':
		mult = MIB;
		break;
	case 'g':
		mult = GIB;
		break;
	case 't':
		mult = 1024 * GIB;
		break;
	default:
		return -EINVAL;
	}
	if (*end) {
		end++;
		if (strcasecmp(end, "") != 0 && strcasecmp(end, "b") != 0 &&
		    strcasecmp(end, "ib") != 0)
			return -EINVAL;
	}
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*out = v * mult;
	return 0;
}

static int parse_uint(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return (!isdigit((unsigned char)*s) || *end || errno) ? -EINVAL : 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "yes", "on", "true"};
	static const char *const no[] = {"0", "no", "off", "false", ""};
	for (size_t i = 0; i < SFS_ARRAY_SIZE(yes); i++)
		if (strcasecmp(s, yes[i]) == 0)
			return *out = true, 0;
	for (size_t i = 0; i < SFS_ARRAY_SIZE(no); i++)
		if (strcasecmp(s, no[i]) == 0)
			return *out = false, 0;
	return -EINVAL;
}

static void choices_text(const struct opt_row *r, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; r->choices[i] && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "|" : "", r->choices[i]);
}

static int apply(struct sfs_options *o, const struct opt_row *r, const char *value, char *err,
		 size_t errlen)
{
	char *field = (char *)o + r->field;
	switch (r->kind) {
	case OPT_PATH:
		if (strlen(value) >= PATH_MAX) {
			snprintf(err, errlen, "%s: path too long", r->env);
			return -EINVAL;
		}
		if (strcmp(field, value) != 0)
			strcpy(field, value);
		return 0;
	case OPT_ENUM:
		for (int i = 0; r->choices[i]; i++) {
			if (strcmp(value, r->choices[i]) == 0) {
				*(int *)field = i;
				return 0;
			}
		}
		char list[128];
		choices_text(r, list, sizeof(list));
		snprintf(err, errlen, "%s=%s: expected %s", r->env, value, list);
		return -EINVAL;
	case OPT_BOOL:
		if (parse_bool(value, (bool *)field) == 0)
			return 0;
		snprintf(err, errlen, "%s=%s: expected 0|1|yes|no|on|off", r->env, value);
		return -EINVAL;
	case OPT_SIZE:
	case OPT_UINT: {
		uint64_t v;
		int rc = r->kind == OPT_SIZE ? sfs_parse_size(value, &v) : parse_uint(value, &v);
		if (rc) {
			snprintf(err, errlen, "%s=%s: expected %s", r->env, value,
				 r->kind == OPT_SIZE ? "a size such as 4096, 64K, 2M, 1G" :
						       "a whole number");
			return -EINVAL;
		}
		if (v < r->min || v > r->max) {
			snprintf(err, errlen, "%s=%s: out of range [%llu, %llu]", r->env, value,
				 (unsigned long long)r->min, (unsigned long long)r->max);
			return -EINVAL;
		}
		if (r->pow2 && (v & (v - 1))) {
			snprintf(err, errlen, "%s=%s: must be a power of two", r->env, value);
			return -EINVAL;
		}
		*(uint64_t *)field = v;
		return 0;
	}
	}
	return -EINVAL;
}

static const struct opt_row *find_row(const char *name)
{
	for (size_t i = 0; i < SFS_ARRAY_SIZE(rows); i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

const char *sfs_option_env_name(const char *name)
{
	const struct opt_row *r = find_row(name);
	return r ? r->env : NULL;
}

int sfs_option_set(struct sfs_options *o, const char *name, const char *value, char *err,
		   size_t errlen)
{
	const struct opt_row *r = find_row(name);
	if (!r) {
		snprintf(err, errlen, "unknown option '%s'", name);
		return -EINVAL;
	}
	return apply(o, r, value, err, errlen);
}

int sfs_options_load(struct sfs_options *o, char *err, size_t errlen)
{
	memcpy(o, &defaults, offsetof(struct sfs_options, root));
	SFS_SET(o->root[0], '\0');
	SFS_SET(o->stats_file[0], '\0');
	/* One pass over the environment, not a getenv per option. The first
	 * definition of a variable counts, as for getenv. */
	bool seen[SFS_ARRAY_SIZE(rows)] = {false};
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "SPLITFS_", 8) != 0)
			continue;
		for (size_t i = 0; i < SFS_ARRAY_SIZE(rows); i++) {
			size_t n = strlen(rows[i].env);
			if (seen[i] || strncmp(*e, rows[i].env, n) != 0 || (*e)[n] != '=')
				continue;
			seen[i] = true;
			int rc = apply(o, &rows[i], *e + n + 1, err, errlen);
			if (rc)
				return rc;
			break;
		}
	}
	return 0;
}

void sfs_options_print(const struct sfs_options *o)
{
	for (size_t i = 0; i < SFS_ARRAY_SIZE(rows); i++) {
		const struct opt_row *r = &rows[i];
		const char *field = (const char *)o + r->field;
		const char *src = getenv(r->env) ? "env" : "default";
		switch (r->kind) {
		case OPT_PATH:
			sfs_msg("option '%s': \"%s\" (%s)", r->name, field, src);
			break;
		case OPT_ENUM:
			sfs_msg("option '%s': %s (%s)", r->name, r->choices[*(const int *)field],
				src);
			break;
		case OPT_BOOL:
			sfs_msg("option '%s': %d (%s)", r->name, *(const bool *)field, src);
			break;
		case OPT_SIZE:
		case OPT_UINT:
			sfs_msg("option '%s': %llu (%s)", r->name,
				(unsigned long long)*(const uint64_t *)field, src);
			break;
		}
	}
}
