/* SPDX-License-Identifier: Apache-2.0 */
/* Clearing the stack the library's start used. The start runs on the
 * stack of the program's call that made it (the constructor's, or the
 * first call that names a path in POSIX mode) and goes 8-16 KiB below
 * it; what it leaves there (directory entries, paths, pointers, which
 * address randomisation makes differ from run to run) a program that
 * reads stack it never wrote then finds in place of what libc leaves.
 * coreutils' sort -g compares two long doubles whole, padding included
 * (the compiler drops the memset before them): with the start's bytes in
 * that padding its merge of two NaNs went round for ever in half the runs
 * (its test sort-NaN-infloop). */
#ifndef SFS_UTIL_STACKCLEAR_H
#define SFS_UTIL_STACKCLEAR_H

/* Zeroes what the call the caller just made left in the 24 KiB below its
 * frame: the pages there in memory, down to the first that is not (one
 * mincore; a page never touched is not written, a fault saved); on a thread
 * whose stack has less room left below, nothing. */
void sfs_clear_stack_below(void);

#endif
