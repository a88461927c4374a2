/* SPDX-License-Identifier: Apache-2.0 */
/* vfork, as the kernel makes it: the child borrows the parent's memory and
 * the parent waits until the child execs or exits. A shell that starts
 * each command with vfork (dash, Debian's /bin/sh) pays no copy of its page
 * tables and no copy-on-write faults afterwards.
 *
 * The child runs on the parent's memory, so the library must not run in
 * it: any table it edited would be the parent's. The parent first does
 * what a fork's atfork handlers do (everything staged goes to the kernel,
 * every managed descriptor is demoted and watched until the child lets go
 * of it: fs/process.h, fs/forkwatch.h) and marks its thread
 * (sfs_vfork_child, sys/global.h). The child runs on that thread's TLS, so
 * it sees the mark, and every wrapper passes its calls straight to the
 * kernel: it has only kernel descriptors, as a posix_spawn child has (in
 * sync and strict modes, its writes to files of the managed file system and
 * its changes to names are made durable per call all the same). The
 * A process that has not started on its root yet (init.h) marks the
 * child all the same: a start there would be made in the parent's memory
 * with the child's descriptors. The
 * parent thread runs again only once the child has exec'd or exited, and
 * clears the mark first, with every signal blocked from before the vfork
 * until then (a handler in between would see the mark); the child restores
 * the caller's mask at once.
 *
 * Where that cannot be done, vfork is fork, as POSIX allows: inside one of
 * the library's critical sections (a handler's vfork), with a shadow stack
 * (the instructions below pop the caller's return address, as glibc's
 * vfork does), and on architectures other than x86-64.
 *
 * No C function can return in the child to a caller that the parent
 * returns to afterwards: the child's later calls overwrite that frame. So
 * vfork itself is a few instructions (below), as glibc's is: it keeps its
 * return address in a register across the system call, and calls into C
 * only before it and, in each process, after it. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/syscall.h>

#include "../fs/metasync.h"
#include "../fs/process.h"
#include "../sys/statq.h"
#include "wrap.h"

__thread bool sfs_vfork_child __attribute__((tls_model("initial-exec")));

/* Called only from the instructions below (hence used, and declared
 * here for -Wmissing-prototypes). */
#define VFORK_STEP __attribute__((used))
int sfs_vfork_enter(void);
void sfs_vfork_in_child(void);
pid_t sfs_vfork_in_parent(long r, int how);
pid_t sfs_vfork_as_fork(void);

/* What vfork_enter tells the instructions: the library is off (a plain
 * vfork), the library's vfork, fork instead, or the vfork of a process
 * not started on its root yet (the child is marked; nothing to prepare). */
enum { VFORK_PLAIN, VFORK_LIBRARY, VFORK_AS_FORK, VFORK_DORMANT };

/* The caller's signal mask while every signal is blocked: written by the
 * parent before the vfork, read by both processes after it. */
static __thread sigset_t caller_mask __attribute__((tls_model("initial-exec")));

static void set_mask(const sigset_t *set, sigset_t *old)
{
	SFS_REAL(syscall)(SYS_rt_sigprocmask, SIG_SETMASK, set, old, _NSIG / 8);
}

#ifndef ARCH_SHSTK_STATUS
#define ARCH_SHSTK_STATUS 0x5005
#endif

/* Whether the process runs with a shadow stack (Linux 6.6+, x86-64): the
 * kernel says so (EINVAL where it cannot). glibc turns it on at start-up
 * or never, and every thread inherits it: asked once. */
static bool shadow_stack(void)
{
	static _Atomic int known = -1;
	int on = atomic_load_explicit(&known, memory_order_relaxed);
	if (on < 0) {
		unsigned long features = 0;
		on = SFS_REAL(syscall)(SYS_arch_prctl, ARCH_SHSTK_STATUS, &features) == 0 &&
		     features != 0;
		atomic_store_explicit(&known, on, memory_order_relaxed);
	}
	return on;
}

/* The parent, before the vfork. */
VFORK_STEP int sfs_vfork_enter(void)
{
	sfs_init();
	/* The child's calls (dup2, execve) look nothing up in its parent's
	 * memory (sys/real.h). */
	sfs_real_resolve();
	bool live = sfs_live();
	/* Not started on its root yet (init.h): the child has nothing of the
	 * library's to leave alone, but must not start it in its parent's
	 * memory either. */
	bool dormant = !live && sfs_dormant();
	if (!live && !dormant)
		return VFORK_PLAIN; /* nothing of the library's to keep apart */
	if (sfs_busy != 0 || shadow_stack())
		return VFORK_AS_FORK;
	if (live)
		sfs_vfork_prepare();
	sigset_t all;
	sigfillset(&all);
	set_mask(&all, &caller_mask);
	sfs_vfork_child = true;
	return live ? VFORK_LIBRARY : VFORK_DORMANT;
}

/* The child, just after a library vfork. */
VFORK_STEP void sfs_vfork_in_child(void)
{
	set_mask(&caller_mask, NULL);
}

/* The parent, after the vfork: r is the system call's result (a pid or
 * -errno); returns vfork's. */
VFORK_STEP pid_t sfs_vfork_in_parent(long r, int how)
{
	if (how != VFORK_PLAIN) {
		sfs_vfork_child = false;
		if (how == VFORK_LIBRARY)
			sfs_vfork_parent(r < 0 ? -1 : (pid_t)r);
		set_mask(&caller_mask, NULL);
	}
	return (pid_t)sfs_ret(r);
}

VFORK_STEP pid_t sfs_vfork_as_fork(void)
{
	return fork();
}

#if defined(__x86_64__)
/* rdi holds the return address across the system call: the kernel keeps
 * every register but rax, rcx and r11, in both processes. esi holds what
 * vfork_enter said. Stack: 8 mod 16 at entry, 16-aligned at each call. */
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	sub $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call sfs_vfork_enter\n"
	"	add $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	cmp $2, %eax\n" /* VFORK_AS_FORK */
	"	je sfs_vfork_as_fork\n"
	"	mov %eax, %esi\n"
	"	pop %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_register %rip, %rdi\n"
	"	mov $58, %eax\n" /* SYS_vfork */
	"	syscall\n"
	"	push %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rip, 0\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"
	"	test %esi, %esi\n" /* the child: VFORK_PLAIN needs nothing */
	"	jz 2f\n"
	"	sub $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call sfs_vfork_in_child\n"
	"	add $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"2:	xor %eax, %eax\n"
	"	ret\n"
	"1:	mov %rax, %rdi\n" /* the parent */
	"	sub $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call sfs_vfork_in_parent\n"
	"	add $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size vfork, .-vfork\n");
_Static_assert(SYS_vfork == 58, "the instructions above name vfork's number");
_Static_assert(VFORK_AS_FORK == 2 && VFORK_PLAIN == 0, "the instructions above test these");
#else
SFS_EXPORT pid_t vfork(void)
{
	return fork();
}
#endif

long sfs_vfork_child_wrote(int fd, long r)
{
	if (!sfs_metasync_on())
		return r;
	struct stat st;
	if (sfs_fstat_quiet(fd, &st) != 0)
		return -1; /* EIO: shut down since the write, which is lost */
	if (!S_ISREG(st.st_mode) || st.st_dev != sfs_g.root_dev)
		return r;
	return SFS_REAL(fdatasync)(fd) == 0 ? r : -1;
}
