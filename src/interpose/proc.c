/* SPDX-License-Identifier: Apache-2.0 */
/* Processes: fork (through pthread_atfork handlers, see fs/process.h),
 * the exec family, posix_spawn, system and popen (vfork: vfork.c). Before a new
 * program or process can see a managed descriptor, staged data is relinked
 * and offsets are written back to the kernel; descriptors the other process
 * inherits are then left to the kernel in this one. */
#define _GNU_SOURCE
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include <sys/syscall.h>

#include "../fs/flush.h"
#include "../fs/forkwatch.h"
#include "../fs/process.h"
#include "../oplog/oplog.h"
#include "../util/threads.h"
#include "spawnfa.h"
#include "wrap.h"

/* fork itself runs the atfork handlers (fs/process.h); the wrapper tells
 * the parent's watch which child shares its demoted descriptors. */
SFS_EXPORT pid_t fork(void)
{
	sfs_init();
	/* The child's calls (execve, dup2, _exit) find their real functions
	 * looked up: each child would otherwise look its own up again, a
	 * dlsym and a copied page each (sys/real.h). */
	sfs_real_resolve();
	sfs_forkwatch_wrapper(true);
	pid_t pid = SFS_REAL(fork)();
	sfs_forkwatch_wrapper(false);
	if (pid != 0 && sfs_live()) /* the parent, also of a fork that failed */
		sfs_forkwatch_born(pid);
	return pid;
}

/* Leaving without exit(): staged appends go into their files first (the
 * kernel's page cache would hold them). exit() itself calls glibc's own
 * _exit, not this one, after the library's destructor. */
static _Noreturn void leave(void (*real)(int), int status)
{
	if (sfs_initialized())
		sfs_flush_before_exit();
	if (real)
		real(status);
	for (;;)
		SFS_REAL(syscall)(SYS_exit_group, status);
}

SFS_EXPORT _Noreturn void _exit(int status)
{
	leave(SFS_REAL(_exit), status);
}

SFS_EXPORT _Noreturn void _Exit(int status)
{
	leave(SFS_REAL(_Exit), status);
}

/* The main thread leaving before the others: the process ends with its
 * last thread, which the library's own threads must not outlive. */
SFS_EXPORT _Noreturn void pthread_exit(void *ret)
{
	if (sfs_initialized() && !sfs_vfork_child && getpid() == (pid_t)syscall(SYS_gettid))
		sfs_main_thread_exiting();
	SFS_REAL(pthread_exit)(ret);
	for (;;)
		SFS_REAL(syscall)(SYS_exit, 0);
}

static void before_exec(void)
{
	if (sfs_active()) {
		uint64_t t0 = sfs_stat_call_start(SFS_CALL_exec);
		sfs_prepare_share(false);
		sfs_stage_unpark_all(); /* the new program makes its own stores */
		sfs_oplog_close(false); /* the new program starts its own log */
		sfs_stat_call_end(SFS_CALL_exec, t0, 0, true);
		sfs_print_stats("exec");
	}
}

SFS_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec();
	return SFS_REAL(execve)(path, argv, envp);
}

SFS_EXPORT int execv(const char *path, char *const argv[])
{
	before_exec();
	return SFS_REAL(execv)(path, argv);
}

SFS_EXPORT int execvp(const char *file, char *const argv[])
{
	before_exec();
	return SFS_REAL(execvp)(file, argv);
}

SFS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_exec();
	return SFS_REAL(execvpe)(file, argv, envp);
}

SFS_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	before_exec();
	return SFS_REAL(fexecve)(fd, argv, envp);
}

SFS_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	before_exec();
	return SFS_REAL(execveat)(dirfd, path, argv, envp, flags);
}

/* execl, execlp, execle: the variadic list as an argv array on the stack,
 * as glibc builds it (no malloc: a vfork child runs on its parent's heap).
 * How many arguments follow arg0, up to the NULL that ends them: */
static size_t count_args(va_list ap)
{
	va_list count;
	va_copy(count, ap);
	size_t n = 0;
	while (va_arg(count, char *))
		n++;
	va_end(count);
	return n;
}

/* More arguments than an exec takes (E2BIG, as glibc's execl). */
#define TOO_MANY_ARGS(n)                                                                           \
	do {                                                                                       \
		if ((n) >= INT_MAX) {                                                              \
			va_end(ap);                                                                \
			errno = E2BIG;                                                             \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

/* argv (n + 2 entries) from arg0 and ap; then *envp, when asked. */
static void fill_args(char **argv, size_t n, const char *arg0, va_list ap, char ***envp)
{
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n + 1; i++)
		argv[i] = va_arg(ap, char *);
	if (envp)
		*envp = va_arg(ap, char **);
}

/* Each through the library's own execv, execvp or execve (which relink
 * first). */
SFS_EXPORT int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	size_t n = count_args(ap);
	TOO_MANY_ARGS(n);
	char *argv[n + 2];
	fill_args(argv, n, arg0, ap, NULL);
	va_end(ap);
	return execv(path, argv);
}

SFS_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	size_t n = count_args(ap);
	TOO_MANY_ARGS(n);
	char *argv[n + 2];
	fill_args(argv, n, arg0, ap, NULL);
	va_end(ap);
	return execvp(file, argv);
}

SFS_EXPORT int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	size_t n = count_args(ap);
	TOO_MANY_ARGS(n);
	char *argv[n + 2];
	char **envp;
	fill_args(argv, n, arg0, ap, &envp);
	va_end(ap);
	return execve(path, argv, envp);
}

/* The child of a spawn holds copies of every descriptor without
 * FD_CLOEXEC, and those its file actions dup2 into it: those files are
 * demoted before it starts (process.h). Actions the library did not record
 * (spawnfa.h) may dup any descriptor: all are. */
static void before_spawn(const posix_spawn_file_actions_t *fa)
{
	sfs_init();
	int fds[SFS_SPAWN_FA_SOURCES];
	int n = fa ? sfs_spawn_fa_sources(fa, fds, SFS_SPAWN_FA_SOURCES) : 0;
	if (sfs_active())
		for (int i = 0; i < n; i++)
			sfs_demote_fd(fds[i]);
	sfs_prepare_share(n >= 0);
}

SFS_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	before_spawn(fa);
	return SFS_REAL(posix_spawn)(pid, path, fa, attr, argv, envp);
}

SFS_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	before_spawn(fa);
	return SFS_REAL(posix_spawnp)(pid, file, fa, attr, argv, envp);
}

SFS_EXPORT int system(const char *cmd)
{
	sfs_init();
	sfs_prepare_share(true);
	return SFS_REAL(system)(cmd);
}

SFS_EXPORT FILE *popen(const char *cmd, const char *mode)
{
	sfs_init();
	sfs_prepare_share(true);
	return SFS_REAL(popen)(cmd, mode);
}
