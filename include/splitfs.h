/* SPDX-License-Identifier: Apache-2.0 */
/* SplitFS public interface. The library is used by preloading it
 * (`splitfs run`, or LD_PRELOAD=libsplitfs.so with SPLITFS_ROOT set); its only
 * symbol of its own is the version, so a program can tell whether it runs
 * under SplitFS: dlsym(RTLD_DEFAULT, "splitfs_version") != NULL. */
#ifndef SPLITFS_H
#define SPLITFS_H

#ifdef __cplusplus
extern "C" {
#endif

const char *splitfs_version(void);

#ifdef __cplusplus
}
#endif

#endif
