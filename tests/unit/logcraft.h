/* SPDX-License-Identifier: Apache-2.0 */
/* Crafting operation logs (src/oplog/format.h) and their target files in a
 * temporary directory, for the recovery unit tests; recovery runs through
 * an sfs_sys table of libc's own functions (nothing is interposed). */
#ifndef SFS_UNIT_LOGCRAFT_H
#define SFS_UNIT_LOGCRAFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../src/oplog/format.h"
#include "../../src/oplog/recover.h"

#define LC_MNT 42			/* the mount recovery runs on */
extern const uint8_t lc_boot[16];	/* the boot recovery runs in */
extern const uint8_t lc_crash_boot[16]; /* an earlier boot: a crash */

struct lc_log {
	unsigned char *m;
	size_t len, at; /* size, where the next record goes */
	uint64_t gen;
	uint64_t set; /* the set's nonce its records carry (0: none) */
};

/* A zeroed log image of len bytes with a v2 header of generation gen,
 * written on boot, mount mnt; records from 8192. false if out of memory. */
bool lc_new(struct lc_log *l, size_t len, uint64_t gen, const uint8_t boot[16], uint64_t mnt);
/* Makes a v2 log (lc_new) lane `lane` of the set with nonce set (0: its
 * main log): its header says so, and its records carry set. */
void lc_set(struct lc_log *l, const uint8_t boot[16], uint64_t mnt, uint64_t set, uint64_t lane);
/* The same with the older v1 header (no ident; records from 64). */
bool lc_new_v1(struct lc_log *l, size_t len, uint64_t gen);
void lc_free(struct lc_log *l);

/* Appends e with its payload (version 1; the log's generation unless e.gen
 * is set, and set unless e.set is; its CRC). Returns the record's offset in the log. */
size_t lc_add(struct lc_log *l, struct sfs_log_entry e, const void *payload);
/* FILE binding id to path (no file handle), inode ino, generation igen. */
size_t lc_file(struct lc_log *l, uint32_t id, uint64_t seq, const char *path, uint64_t ino,
	       uint64_t igen);
/* WRITE of the string data at off. */
size_t lc_write(struct lc_log *l, uint32_t id, uint64_t seq, uint64_t off, const char *data);
/* An in-flight slot (v2 logs) naming the record of seq in the log's generation. */
void lc_inflight(struct lc_log *l, int slot, uint32_t state, uint64_t seq, int64_t started_ns);

/* Writes the whole image (allocated, not sparse) to dir/name with mode.
 * 0 or -1. */
int lc_save(const struct lc_log *l, const char *dir, const char *name, mode_t mode);

/* Creates dir/name holding content; fills path (LC_PATH bytes), its inode
 * and i_generation (0 where the file system keeps none, as recovery reads
 * it). false on error. */
#define LC_PATH 4200
bool lc_target(const char *dir, const char *name, const char *content, char *path, uint64_t *ino,
	       uint64_t *igen);
/* The file's whole content as a string (static buffer), or "<error>". */
const char *lc_read(const char *path);
bool lc_exists(const char *dir, const char *name);
/* Names in dir that start with prefix. */
int lc_count(const char *dir, const char *prefix);

/* Recovery by this user on dir's file system, in boot lc_boot, mount LC_MNT. */
struct sfs_recover_env lc_env(const char *dir);
int64_t lc_now_ns(void);

#endif
