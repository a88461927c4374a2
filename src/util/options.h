/* SPDX-License-Identifier: Apache-2.0 */
/* Run-time options (SPLITFS_* environment variables). One table describes
 * every option; the library, the CLI and the tests parse through it, so
 * `splitfs run` rejects exactly what the library would reject. */
#ifndef SFS_UTIL_OPTIONS_H
#define SFS_UTIL_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sfs_mode { SFS_MODE_POSIX, SFS_MODE_SYNC, SFS_MODE_STRICT };
enum sfs_relink_kind { SFS_RELINK_AUTO, SFS_RELINK_EXCHANGE, SFS_RELINK_CLONE, SFS_RELINK_COPY };

/* The paths last: a process that starts writes the scalars and the first
 * bytes of root, one page (sys/global.h). */
struct sfs_options {
	int mode;		/* enum sfs_mode */
	uint64_t map_size;	/* mapping chunk of target files, power of two */
	uint64_t staging_files; /* staging files kept ready per process */
	uint64_t staging_size;	/* staged bytes per file before an early relink
				 * (the size of a staging ring) */
	uint64_t log_size;	/* operation log size; 0: the mode's
				 * (oplog/logfile.h) */
	uint64_t cold_min;	/* files larger than this take non-temporal
				 * stores for scattered overwrites
				 * (fs/coldwrite.h); 0: the last-level cache's
				 * size */
	int relink;		/* enum sfs_relink_kind */
	bool staging;		/* stage appends (off: appends go to the kernel;
				 * the "split path only" point of Figure 3) */
	bool protect;		/* file mappings read-only except inside a write */
	bool share;		/* store into files other library processes have
				 * open too (fs/share.h; off: the kernel writes) */
	bool logsync;		/* POSIX mode: a small append's fdatasync served
				 * by the operation log (fs/logsync.h) */
	bool stats;
	bool verbose;
	char root[PATH_MAX];	   /* empty: the library passes everything through */
	char stats_file[PATH_MAX]; /* empty: stderr */
};

/* Fills *o with defaults, then applies every SPLITFS_* variable found in the
 * environment. Every field is set (o need not be zeroed); a path is written
 * only where it differs, so that a start touches no page of an empty one.
 * Returns 0, or -EINVAL with a one-line reason in err (e.g.
 * "SPLITFS_MODE=fast: expected posix|sync|strict"). */
int sfs_options_load(struct sfs_options *o, char *err, size_t errlen);

/* Applies one option by its short name ("mode", "map_size", ...). */
int sfs_option_set(struct sfs_options *o, const char *name, const char *value, char *err,
		   size_t errlen);

/* Environment variable name of an option ("mode" -> "SPLITFS_MODE"), or NULL. */
const char *sfs_option_env_name(const char *name);

/* Prints one "option 'x': value (env|default)" line per option via sfs_msg. */
void sfs_options_print(const struct sfs_options *o);

const char *sfs_mode_name(int mode);
const char *sfs_relink_name(int kind);

/* Parses "64M", "2MiB", "4096", "1g" into bytes. Returns 0 or -EINVAL/-ERANGE. */
int sfs_parse_size(const char *s, uint64_t *out);

#endif
