/* SPDX-License-Identifier: Apache-2.0 */
/* Small compiler helpers shared by the library, the CLI and the tests. */
#ifndef SFS_UTIL_COMPILER_H
#define SFS_UTIL_COMPILER_H

#include <assert.h>	/* static_assert */
#include <stddef.h>

#define sfs_likely(x) __builtin_expect(!!(x), 1)
#define sfs_unlikely(x) __builtin_expect(!!(x), 0)

/* Symbols the library exports (the interposed libc names); all else is hidden
 * by -fvisibility=hidden and the version script. */
#define SFS_EXPORT __attribute__((visibility("default")))

/* For the few entry points that may run inside a sanitizer runtime's own
 * initialisation (it calls sigaction and setrlimit before its shadow memory
 * exists, when the library is built with SANITIZE=...). */
#define SFS_NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))

#define SFS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define SFS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SFS_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Power-of-two alignment helpers on 64-bit offsets. */
#define SFS_ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a) - 1))
#define SFS_ALIGN_UP(x, a) SFS_ALIGN_DOWN((x) + (a) - 1, (a))

/* The block size relink works in: XFS exchange-range and FICLONERANGE need
 * both offsets aligned to the file system block (4 KiB on every image we make;
 * the relink layer checks st_blksize and falls back to copying otherwise). */
#define SFS_BLOCK 4096

#endif
