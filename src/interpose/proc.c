/* SPDX-License-Identifier: Apache-2.0 */
/* Processes: fork (through pthread_atfork handlers, see fs/process.h),
 * vfork, the exec family, posix_spawn, system and popen. Before a new
 * program or process can see a managed descriptor, staged data is relinked
 * and offsets are written back to the kernel; descriptors the other process
 * inherits are then left to the kernel in this one. */
#define _GNU_SOURCE
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

/* vfork's child borrows the parent's memory, so the library's wrappers in
 * it would edit the parent's tables: give it a real copy (POSIX allows
 * vfork to be fork). The atfork handlers run as for fork. */
SFS_EXPORT pid_t vfork(void)
{
	return fork();
}

/* fork itself runs the atfork handlers (fs/process.h); the wrapper tells
 * the parent's watch which child shares its demoted descriptors. */
SFS_EXPORT pid_t fork(void)
{
	sfs_init();
	sfs_forkwatch_wrapper(true);
	pid_t pid = sfs_real.fork();
	sfs_forkwatch_wrapper(false);
	if (pid != 0 && sfs_g.active) /* the parent, also of a fork that failed */
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
		sfs_real.syscall(SYS_exit_group, status);
}

SFS_EXPORT _Noreturn void _exit(int status)
{
	leave(sfs_real._exit, status);
}

SFS_EXPORT _Noreturn void _Exit(int status)
{
	leave(sfs_real._Exit, status);
}

/* The main thread leaving before the others: the process ends with its
 * last thread, which the library's own threads must not outlive. */
SFS_EXPORT _Noreturn void pthread_exit(void *ret)
{
	if (sfs_initialized() && sfs_g.active && getpid() == (pid_t)syscall(SYS_gettid))
		sfs_main_thread_exiting();
	sfs_real.pthread_exit(ret);
	for (;;)
		sfs_real.syscall(SYS_exit, 0);
}

static void before_exec(void)
{
	if (sfs_active()) {
		uint64_t t0 = sfs_stat_start();
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
	return sfs_real.execve(path, argv, envp);
}

SFS_EXPORT int execv(const char *path, char *const argv[])
{
	before_exec();
	return sfs_real.execv(path, argv);
}

SFS_EXPORT int execvp(const char *file, char *const argv[])
{
	before_exec();
	return sfs_real.execvp(file, argv);
}

SFS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_exec();
	return sfs_real.execvpe(file, argv, envp);
}

SFS_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	before_exec();
	return sfs_real.fexecve(fd, argv, envp);
}

SFS_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	before_exec();
	return sfs_real.execveat(dirfd, path, argv, envp, flags);
}

/* execl, execlp, execle: collect the variadic list into an argv array. */
static char **collect(const char *arg0, va_list ap, char ***envp)
{
	va_list count;
	va_copy(count, ap);
	size_t n = 1;
	while (va_arg(count, char *))
		n++;
	va_end(count);
	char **argv = malloc((n + 1) * sizeof(*argv));
	if (!argv)
		return NULL;
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(ap, char *);
	if (envp)
		*envp = va_arg(ap, char **);
	return argv;
}

/* execl and execlp: the collected argv run by execv or execvp (the
 * library's own, which relink first), freed if the exec fails. */
static int exec_collected(int (*exec)(const char *, char *const[]), const char *file, char **argv)
{
	if (!argv)
		return -1;
	int r = exec(file, argv);
	free(argv);
	return r;
}

SFS_EXPORT int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	char **argv = collect(arg0, ap, NULL);
	va_end(ap);
	return exec_collected(execv, path, argv);
}

SFS_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	va_start(ap, arg0);
	char **argv = collect(arg0, ap, NULL);
	va_end(ap);
	return exec_collected(execvp, file, argv);
}

SFS_EXPORT int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	char **envp = NULL;
	va_start(ap, arg0);
	char **argv = collect(arg0, ap, &envp);
	va_end(ap);
	if (!argv)
		return -1;
	int r = execve(path, argv, envp);
	free(argv);
	return r;
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
	return sfs_real.posix_spawn(pid, path, fa, attr, argv, envp);
}

SFS_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	before_spawn(fa);
	return sfs_real.posix_spawnp(pid, file, fa, attr, argv, envp);
}

SFS_EXPORT int system(const char *cmd)
{
	sfs_init();
	sfs_prepare_share(true);
	return sfs_real.system(cmd);
}

SFS_EXPORT FILE *popen(const char *cmd, const char *mode)
{
	sfs_init();
	sfs_prepare_share(true);
	return sfs_real.popen(cmd, mode);
}
