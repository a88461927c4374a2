/* SPDX-License-Identifier: Apache-2.0 */
/* errno probes: mmap, in-kernel copies, the rest, and the hazards
 * that take a library down (probes.h). */
#define _GNU_SOURCE
#include "probes.h"

/* An action's flags without SA_RESTORER (glibc's own, not the caller's). */
#define APP_FLAGS(f) ((f) & ~0x04000000)

/* What a SA_RESETHAND handler read back of its action inside it:
 * flags * 2 + (handler is SIG_DFL). */
static volatile long reset_seen = -1;
static void record_reset(int sig)
{
	struct sigaction now;
	if (sigaction(sig, NULL, &now) == 0)
		reset_seen = (long)APP_FLAGS(now.sa_flags) * 2 + (now.sa_handler == SIG_DFL);
}
static void on_reset(int sig)
{
	record_reset(sig);
}
static void on_reset_info(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	record_reset(sig);
}

/* SA_RESETHAND (with SA_NODEFER, and SA_SIGINFO when info): inside the
 * handler and after it, the action of sig reads back as the kernel reset
 * it (SIG_DFL, the flags kept; gnulib's test-sigaction). Probes named
 * sigaction.<name>.*. */
static void probe_resethand(const char *name, int sig, bool info)
{
	struct sigaction rh = {.sa_flags = SA_RESETHAND | SA_NODEFER}, old;
	if (info) {
		rh.sa_sigaction = on_reset_info;
		rh.sa_flags |= SA_SIGINFO;
	} else {
		rh.sa_handler = on_reset;
	}
	sigemptyset(&rh.sa_mask);
	reset_seen = -1;
	PR(nm("sigaction.%s.set", name), sigaction(sig, &rh, NULL));
	PR(nm("sigaction.%s.raise", name), raise(sig));
	out(nm("sigaction.%s.inside", name), reset_seen, 0);
	memset(&old, 0, sizeof(old));
	PR(nm("sigaction.%s.get", name), sigaction(sig, NULL, &old));
	out(nm("sigaction.%s.after.flags", name), APP_FLAGS(old.sa_flags), 0);
	out(nm("sigaction.%s.after.dfl", name), old.sa_handler == SIG_DFL, 0);
	signal(sig, SIG_DFL);
}

/* --- mmap (on a file of its own: a mapping hands the file to the kernel) - */

void maps(void)
{
	pmap("mmap.len0", 0, PROT_READ, MAP_SHARED, aux_ro, 0);
	pmap("mmap.badfd", PG, PROT_READ, MAP_SHARED, -1, 0);
	pmap("mmap.dir", PG, PROT_READ, MAP_SHARED, dfd, 0);
	pmap("mmap.opath", PG, PROT_READ, MAP_SHARED, opath, 0);
	pmap("mmap.wronly-read", PG, PROT_READ, MAP_SHARED, aux_wo, 0);
	pmap("mmap.rdonly-sharedwrite", PG, PROT_READ | PROT_WRITE, MAP_SHARED, aux_ro, 0);
	pmap("mmap.append-sharedwrite", PG, PROT_READ | PROT_WRITE, MAP_SHARED, aux_app, 0);
	pmap("mmap.unaligned-off", PG, PROT_READ, MAP_SHARED, aux_rw, 100);
	pmap("mmap.neg-off", PG, PROT_READ, MAP_SHARED, aux_rw, -PG);
	pmap("mmap.noflags", PG, PROT_READ, 0, aux_rw, 0);
	pmap("mmap.validate-unknown", PG, PROT_READ, MAP_SHARED_VALIDATE | 0x800000, aux_rw, 0);
	pmap("mmap.huge-len", (size_t)1 << 62, PROT_READ, MAP_SHARED, aux_rw, 0);
	pmap("mmap.rdonly-privatewrite", PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, aux_ro, 0);
	PR("mmap.after.pread", pread(aux_ro, buf, 64, 0));
	PR("mmap.after.write", write(aux_app, data, 64));
	summary("mmap.aux", aux_ro);
}

/* --- in-kernel copies ---------------------------------------------------- */

void transfers(void)
{
	int pfd[2];
	T_REQUIRE(pipe(pfd) == 0, "pipe");
	off_t off = 0, neg = -1, a = 0, b = 0, big = LLONG_MAX - 4, mid = 8192 + 100;
	PR("sendfile.in-bad", sendfile(outfd, -1, NULL, 16));
	PR("sendfile.out-bad", sendfile(-1, rw, NULL, 16));
	PR("sendfile.out-rdonly", sendfile(ro, rw, NULL, 16));
	PR("sendfile.in-wronly", sendfile(outfd, wo, NULL, 16));
	PR("sendfile.in-dir", sendfile(outfd, dfd, NULL, 16));
	PR("sendfile.out-append", sendfile(app, ro, &off, 16));
	PR("sendfile.off-bad", sendfile(outfd, rw, hide((void *)1), 16));
	PR("sendfile.off-neg", sendfile(outfd, rw, &neg, 16));
	PR("sendfile.ok", sendfile(outfd, ro, &off, 16));
	PR("sendfile.ok-pos", sendfile(outfd, ro, NULL, 16));
	PR("sendfile.ok-pos.after", lseek(ro, 0, SEEK_CUR));
	PR("cfr.flags", copy_file_range(ro, &a, outfd, &b, 16, 1));
	PR("cfr.in-bad", copy_file_range(-1, &a, outfd, &b, 16, 0));
	PR("cfr.in-wronly", copy_file_range(wo, &a, outfd, &b, 16, 0));
	PR("cfr.out-rdonly", copy_file_range(ro, &a, ro, &b, 16, 0));
	PR("cfr.out-append", copy_file_range(ro, &a, app, NULL, 16, 0));
	PR("cfr.in-dir", copy_file_range(dfd, &a, outfd, &b, 16, 0));
	PR("cfr.off-neg", copy_file_range(ro, &neg, outfd, &b, 16, 0));
	PR("cfr.off-bad", copy_file_range(ro, hide((void *)1), outfd, &b, 16, 0));
	PR("cfr.off-overflow", copy_file_range(ro, &a, outfd, &big, 16, 0));
	b = 8;
	PR("cfr.same-overlap", copy_file_range(rw, &a, rw, &b, 16, 0));
	b = 0;
	PR("cfr.ok", copy_file_range(ro, &a, outfd, &b, 16, 0));
	PR("cfr.ok-pos", copy_file_range(ro, NULL, outfd, NULL, 16, 0));
	PR("cfr.ok-pos.after-in", lseek(ro, 0, SEEK_CUR));
	PR("cfr.ok-pos.after-out", lseek(outfd, 0, SEEK_CUR));
	PR("splice.file-file", splice(ro, NULL, outfd, NULL, 16, 0));
	PR("splice.in-bad", splice(-1, NULL, pfd[1], NULL, 16, 0));
	PR("splice.badflags", splice(ro, NULL, pfd[1], NULL, 16, 0x100));
	PR("splice.off-bad", splice(ro, hide((void *)1), pfd[1], NULL, 16, 0));
	PR("splice.off-neg", splice(ro, &neg, pfd[1], NULL, 16, 0));
	PR("splice.ok", splice(ro, &mid, pfd[1], NULL, 16, 0));
	PR("splice.ok-pos", splice(ro, NULL, pfd[1], NULL, 16, 0));
	PR("splice.ok-pos.after", lseek(ro, 0, SEEK_CUR));
	PR("splice.to-rdonly", splice(pfd[0], NULL, ro, NULL, 16, 0));
	PR("splice.to-append", splice(pfd[0], NULL, app, NULL, 16, 0));
	b = 0;
	PR("splice.to-file", splice(pfd[0], NULL, outfd, &b, 16, 0));
	close(pfd[0]), close(pfd[1]);
}

/* --- everything else ----------------------------------------------------- */

void misc(void)
{
	/* syscall(2) reaches the kernel by number; the library routes some. */
	struct iovec v[1] = {{buf, 16}};
	PR("syscall.read.badfd", syscall(SYS_read, -1, buf, 1));
	PR("syscall.write.rdonly", syscall(SYS_write, ro, data, 1));
	PR("syscall.pread.neg", syscall(SYS_pread64, rw, buf, 16, -1L));
	PR("syscall.pwrite.llmax", syscall(SYS_pwrite64, rw, data, 16, LLONG_MAX));
	PR("syscall.lseek.badwhence", syscall(SYS_lseek, rw, 0L, 7));
	PR("syscall.dup3.self", syscall(SYS_dup3, rw, rw, 0));
	PR("syscall.fstat.null", syscall(SYS_fstat, rw, NULL));
	PR("syscall.ftruncate.neg", syscall(SYS_ftruncate, rw, -1L));
	PR("syscall.openat.null", syscall(SYS_openat, AT_FDCWD, NULL, O_RDONLY, 0));
	/* vlen is an unsigned long for the kernel: 2^32 + 1 is too many. */
	PR("syscall.readv.vlen-2^32+1", syscall(SYS_readv, rw, v, (1L << 32) | 1));
	off_t eof = restage();
	PR("syscall.pread.staged", syscall(SYS_pread64, ro, buf, 16, eof - 16));
	PR("syscall.preadv.staged", syscall(SYS_preadv, ro, v, 1, eof - 16, 0L));

	/* sigaction on the signals the library keeps for itself, and another. */
	struct sigaction sa = {.sa_handler = SIG_IGN}, old;
	sa.sa_flags = SA_RESTART | 0x400; /* SA_UNSUPPORTED: the kernel clears it */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGKILL); /* the kernel drops SIGKILL from masks */
	sigaddset(&sa.sa_mask, SIGUSR1);
	int sigs[] = {SIGSEGV, SIGBUS, SIGUSR2};
	for (int i = 0; i < 3; i++) {
		int s = sigs[i];
		PR(nm("sigaction.get.%d", s), sigaction(s, NULL, &old));
		PR(nm("sigaction.set.%d", s), sigaction(s, &sa, NULL));
		memset(&old, 0, sizeof(old));
		PR(nm("sigaction.readback.%d", s), sigaction(s, NULL, &old));
		/* The flags without SA_RESTORER (glibc's own), the mask as bits. */
		out(nm("sigaction.readback.%d.flags", s), APP_FLAGS(old.sa_flags), 0);
		int bits = (old.sa_handler == SIG_IGN) * 4;
		bits += sigismember(&old.sa_mask, SIGKILL) * 2 + sigismember(&old.sa_mask, SIGUSR1);
		out(nm("sigaction.readback.%d.ign-kill-usr1", s), bits, 0);
		PR(nm("signal.reset.%d", s), signal(s, SIG_DFL) == SIG_IGN ? 1 : -1);
	}
	probe_resethand("resethand", SIGUSR2, false);
	probe_resethand("resethand-segv", SIGSEGV, true); /* the guard's signal */
	PR("sigaction.sig0", sigaction(0, &sa, NULL));
	PR("sigaction.sigkill", sigaction(SIGKILL, &sa, NULL));
	PR("sigaction.sig65", sigaction(65, &sa, NULL));
	PR("signal.sigkill", signal(SIGKILL, SIG_IGN) == SIG_ERR ? -1 : 0);

	/* RLIMIT_FSIZE holds for every write, overwrites in place included. The
	 * output file is subject to it too: lines collect until it is lifted. */
	struct rlimit rl, small;
	getrlimit(RLIMIT_FSIZE, &rl);
	small = rl, small.rlim_cur = 4096;
	signal(SIGXFSZ, SIG_IGN);
	deferred = calloc(1, 4096);
	setrlimit(RLIMIT_FSIZE, &small);
	PR("fsize.pwrite.inside-past-limit", pwrite(rw, data, 16, 5000));
	PR("fsize.pwrite.across-limit", pwrite(rw, data, 16, 4090));
	PR("fsize.write.append", write(app, data, 16));
	PR("fsize.ftruncate.grow", ftruncate(rw, fsize(rw) + 100000));
	PR("fsize.fallocate.grow", fallocate(rw, 0, 0, fsize(rw) + 100000));
	setrlimit(RLIMIT_FSIZE, &rl);
	fputs(deferred, stdout);
	free(deferred), deferred = NULL;
	signal(SIGXFSZ, SIG_DFL);

	/* A failed exec or spawn. Last: the library leaves every descriptor a
	 * child could inherit to the kernel afterwards. */
	char *argv[] = {"x", NULL};
	PR("execve.noent", execve("/nonexistent/x", argv, environ));
	PR("execve.noexec", execve(p_file, argv, environ));
	PR("execve.null", execve(hide(NULL), argv, environ));
	pid_t pid;
	PEN("posix_spawn.noent", posix_spawn(&pid, "/nonexistent/x", NULL, NULL, argv, environ));
	PR("after-spawn.pread", pread(ro, buf, 16, 100));
}

/* --- what takes the library down ----------------------------------------- */

/* Calls on two descriptors of one open file, both at the file offset. On a
 * fresh file (the others were left to the kernel by the spawn above). */
void hazards(void)
{
	int h = xopen("hazard.dat", O_RDWR | O_CREAT | O_TRUNC), hd = dup(h);
	T_REQUIRE(write(h, data, 64) == 64 && lseek(h, 0, SEEK_SET) == 0, "hazard.dat");
	PR("hazard.cfr.same-fd-pos", copy_file_range(h, NULL, h, NULL, 16, 0));
	PR("hazard.cfr.dup-pos", copy_file_range(h, NULL, hd, NULL, 16, 0));
	PR("hazard.sendfile.same-fd", sendfile(h, h, NULL, 16));
	PR("hazard.splice.same-fd", splice(h, NULL, h, NULL, 16, 0));
	summary("hazard.file", h);
	close(h), close(hd);
}
