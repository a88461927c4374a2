/* SPDX-License-Identifier: Apache-2.0 */
/* Small compiler helpers shared by the library, the CLI and the tests. */
#ifndef SFS_UTIL_COMPILER_H
#define SFS_UTIL_COMPILER_H

#include <assert.h> /* static_assert */
#include <stddef.h>

#define sfs_likely(x) __builtin_expect(!!(x), 1)
#define sfs_unlikely(x) __builtin_expect(!!(x), 0)

/* Symbols the library exports (the interposed libc names); all else is hidden
 * by -fvisibility=hidden and the version script. */
#define SFS_EXPORT __attribute__((visibility("default")))

/* For the few entry points that may run inside a sanitizer runtime's own
 * initialisation (it calls sigaction and setrlimit before its shadow memory
 * exists, when the library is built with SANITIZE=...). */
#define SFS_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

/* 1 in a ThreadSanitizer build (make SANITIZE=thread), with gcc or clang. */
#if defined(__SANITIZE_THREAD__)
#define SFS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SFS_TSAN 1
#endif
#endif
#ifndef SFS_TSAN
#define SFS_TSAN 0
#endif

/* 1 in an AddressSanitizer build (make SANITIZE=address), with gcc or clang. */
#if defined(__SANITIZE_ADDRESS__)
#define SFS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SFS_ASAN 1
#endif
#endif
#ifndef SFS_ASAN
#define SFS_ASAN 0
#endif

/* Around a reader's copy of file bytes that a writer may be changing at
 * the same time: the versioned reads (fs/versions.h) copy without a lock
 * and throw away a copy that a write overlapped, a data race by design
 * that ThreadSanitizer cannot tell from a real one (it models neither the
 * seqlock's fences nor the retry). Its build ignores the copy's own
 * accesses; all else on the read path (sizes, mappings, counters) stays
 * checked. Nothing in other builds. */
#if SFS_TSAN
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#define sfs_racy_copy_begin() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define sfs_racy_copy_end() AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#else
#define sfs_racy_copy_begin() ((void)0)
#define sfs_racy_copy_end() ((void)0)
#endif

/* Process-wide variables that every process start or exit of the library
 * touches, or a fork (the atfork handlers, a forked child's resets), kept
 * together in one section: each first touch of a page of .data or .bss is
 * a page fault (1.3-3 us each on this project's VMs, two for a mutex: its
 * read maps the zero page, its write copies it), after a fork in the
 * parent and the child alike, and the big tables between such variables
 * spread ten of them over ten pages. Only for small, writable variables;
 * bench/src/spawn.c measures a start. The ones left out show in `perf
 * record -e page-faults -d` of a shell loop: the symbols of the addresses. */
#define SFS_HOT __attribute__((section("sfs_hot")))

/* lv = v, unless lv holds v already (an _Atomic lv: an atomic load, then
 * an atomic store). For a forked child's resets: each page written is
 * copied (a fault), in every child, most of which only exec or exit. */
#define SFS_SET(lv, v)                                                                             \
	do {                                                                                       \
		if ((lv) != (v))                                                                   \
			(lv) = (v);                                                                \
	} while (0)

#define SFS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define SFS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SFS_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Power-of-two alignment helpers on 64-bit offsets. */
#define SFS_ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a)-1))
#define SFS_ALIGN_UP(x, a) SFS_ALIGN_DOWN((x) + (a)-1, (a))

/* The block size relink works in: XFS exchange-range and FICLONERANGE need
 * both offsets aligned to the file system block (4 KiB on every image we make;
 * the relink layer checks st_blksize and falls back to copying otherwise). */
#define SFS_BLOCK 4096

#endif
