/* SPDX-License-Identifier: Apache-2.0 */
/* Description: errno differential probes. Sets up fixtures in argv[1] (a
 * file with committed and appended bytes, open read-only, write-only,
 * read-write, O_APPEND, O_PATH and dup'd; a directory; closed and huge fd
 * numbers) and runs a battery of mostly bad-input calls on everything the
 * library interposes, one line per probe: "<name> ret=<r> errno=<name|0>".
 * suites/errno.sh runs it on the kernel and under SplitFS and diffs the
 * outputs: the library must answer as the kernel does, and never crash or
 * hang. No pointer, pid or descriptor number is printed, so two kernel runs
 * print the same. Exits 0; a missing tail means the program died or hung.
 * Runs only as "errno_diff DIR --run" (suites/c-tests.sh runs every test
 * binary with DIR alone, and no self-check applies here: it skips).
 * Probes that may write where they should not use files of their own, so a
 * wrong write shows in their own size line instead of shifting every line
 * after it; the checksums at the end catch the rest. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utime.h>

#include "helpers.h"

extern char **environ;

#define PG 4096L
#define KADDR ((void *)0xffffffffff600000UL) /* the vsyscall page: kernel space */
#define USEREND ((void *)0x7ffffffff000UL)   /* the end of user space */
#define HUGEFD 0x7fffff00
#define CLOSEDFD                                                                                   \
	200 /* never the lowest free number: that one races with the
		      * library opening its own descriptors */
#define RWF_UNKNOWN (1 << 30)
#define N(a) (sizeof(a) / sizeof((a)[0]))

static char *p_file;
static int ro, wo, rw, app, opath, dfd, duprw, dupro, aux_ro, aux_wo, aux_rw, aux_app, outfd;
static char buf[1 << 16], data[256];
static char *rdonly_page, *straddle, *hole;

/* --- output -------------------------------------------------------------- */

static char *deferred; /* while set, lines collect here (RLIMIT_FSIZE probes) */

static void out(const char *name, long ret, int err)
{
	char num[16];
	const char *e = err ? strerrorname_np(err) : "0";
	if (!e)
		snprintf(num, sizeof(num), "%d", err), e = num;
	if (deferred)
		snprintf(deferred + strlen(deferred), 4096 - strlen(deferred),
			 "%s ret=%ld errno=%s\n", name, ret, e);
	else
		printf("%s ret=%ld errno=%s\n", name, ret, e);
}

/* A probe name, formatted into a static buffer. */
static const char *nm(const char *fmt, ...)
{
	static char name[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return name;
}

/* A call that fails with a negative result and errno. The name is made
 * before the call, errno read right after it. */
#define PR(name, call)                                                                             \
	do {                                                                                       \
		const char *n_ = (name);                                                           \
		long r_ = (errno = 0, (long)(call));                                               \
		out(n_, r_, r_ < 0 ? errno : 0);                                                   \
	} while (0)

/* A call that returns a new descriptor: printed as 1, and closed. */
#define PFD(name, call)                                                                            \
	do {                                                                                       \
		const char *n_ = (name);                                                           \
		int r_ = (errno = 0, (call)), e_ = errno;                                          \
		out(n_, r_ >= 0 ? 1 : -1, r_ >= 0 ? 0 : e_);                                       \
		close(r_);                                                                         \
	} while (0)

/* A call that returns an error number (posix_fallocate, posix_spawn). */
static void out_en(const char *name, int r)
{
	out(name, r, r);
}
#define PEN(name, call) out_en((name), (call))

/* mmap: 0 for a mapping (unmapped again at once), -1 and errno. */
static void pmap(const char *name, size_t len, int prot, int flags, int fd, off_t off)
{
	void *m = mmap(NULL, len, prot, flags, fd, off);
	out(name, m == MAP_FAILED ? -1 : 0, m == MAP_FAILED ? errno : 0);
	if (m != MAP_FAILED)
		munmap(m, len);
}

/* Hides a value from the compiler (no -Wnonnull, no object-size checks). */
static void *hide(const void *p)
{
	void *q = (void *)p;
	__asm__ volatile("" : "+r"(q));
	return q;
}

static off_t fsize(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_size : -1;
}

static long fnv(const unsigned char *p, long n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (long i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return (long)(h >> 1);
}

/* Size and checksum of a file as the application sees it (through fd). */
static void summary(const char *tag, int fd)
{
	static unsigned char whole[1 << 22];
	out(nm("%s.size", tag), (long)fsize(fd), 0);
	ssize_t got = pread(fd, whole, sizeof(whole), 0);
	out(nm("%s.read", tag), (long)got, got < 0 ? errno : 0);
	out(nm("%s.fnv", tag), fnv(whole, got), 0);
}

/* --- fixtures ------------------------------------------------------------ */

static int xopen(const char *p, int flags)
{
	int fd = open(p, flags, 0644);
	T_REQUIRE(fd >= 0, "open %s", p);
	return fd;
}

static void setup(const char *dir)
{
	p_file = strdup(t_path(dir, "file.dat"));
	for (int i = 0; i < (int)sizeof(data); i++)
		data[i] = (char)('A' + i % 26);
	unsigned char chunk[8192];
	t_fill(chunk, sizeof(chunk), 7, 0);
	/* 8 KiB fsync'd (committed), then 1000 bytes the library stages. */
	rw = xopen(p_file, O_RDWR | O_CREAT | O_TRUNC);
	T_REQUIRE(write(rw, chunk, sizeof(chunk)) == (ssize_t)sizeof(chunk), "fill");
	T_REQUIRE(fsync(rw) == 0 && write(rw, chunk, 1000) == 1000, "append");
	ro = xopen(p_file, O_RDONLY), wo = xopen(p_file, O_WRONLY);
	app = xopen(p_file, O_WRONLY | O_APPEND), opath = xopen(p_file, O_PATH);
	duprw = dup(rw), dupro = fcntl(ro, F_DUPFD_CLOEXEC, 0);
	dfd = xopen(dir, O_RDONLY | O_DIRECTORY);
	T_REQUIRE(dup2(rw, CLOSEDFD) == CLOSEDFD && close(CLOSEDFD) == 0, "closed fd");
	T_REQUIRE(mkdir("sub", 0755) == 0 && symlink("loop2", "loop") == 0 &&
			  symlink("loop", "loop2") == 0,
		  "sub, loop");
	int a = xopen("aux.dat", O_RDWR | O_CREAT | O_TRUNC);
	T_REQUIRE(write(a, chunk, sizeof(chunk)) == (ssize_t)sizeof(chunk), "aux");
	close(a);
	aux_ro = xopen("aux.dat", O_RDONLY), aux_wo = xopen("aux.dat", O_WRONLY);
	aux_rw = xopen("aux.dat", O_RDWR), aux_app = xopen("aux.dat", O_WRONLY | O_APPEND);
	outfd = xopen("out.dat", O_RDWR | O_CREAT | O_TRUNC);
	/* A read-only page, and a page whose last 100 bytes are followed by an
	 * unmapped one. The hole lies far below where mmap allocates, so no
	 * later mapping (the library's included) fills it. */
	int anon = MAP_PRIVATE | MAP_ANONYMOUS;
	rdonly_page = mmap(NULL, PG, PROT_READ, anon, -1, 0);
	char *two = mmap((void *)0x100000000000UL, 2 * PG, PROT_READ | PROT_WRITE,
			 anon | MAP_FIXED_NOREPLACE, -1, 0);
	if (two == MAP_FAILED)
		two = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, anon, -1, 0);
	T_REQUIRE(rdonly_page != MAP_FAILED && two != MAP_FAILED, "mmap");
	munmap(two + PG, PG);
	hole = two + PG, straddle = hole - 100;
	memset(straddle, 'p', 100);
}

/* Appends 64 bytes through the O_APPEND descriptor, so the library holds
 * staged bytes again (every kernel fallback relinks them). Returns the size. */
static off_t restage(void)
{
	if (write(app, data, 64) != 64)
		out("restage", -1, errno);
	return fsize(rw);
}

/* --- data calls with bad buffers ---------------------------------------- */

static void bad_buffers(void)
{
	void *bp[] = {NULL, (void *)1, KADDR, hole, USEREND, rdonly_page, straddle};
	const char *bn[] = {"null", "one", "kaddr", "unmapped", "userend", "rdonly", "straddle"};
	const char *atn[3] = {"mid", "staged", "eof"};
	for (size_t i = 0; i < N(bp); i++) {
		void *p = hide(bp[i]);
		const char *b = bn[i];
		for (size_t n = 0; n <= 200; n += 200) {
			off_t stg = restage() - 32, at[3] = {100, stg, fsize(rw)};
			for (int k = 0; k < 3; k++) {
				lseek(rw, at[k], SEEK_SET);
				PR(nm("read.%s.%zu.%s", b, n, atn[k]), read(rw, p, n));
				PR(nm("pread.%s.%zu.%s", b, n, atn[k]), pread(ro, p, n, at[k]));
				lseek(rw, at[k], SEEK_SET);
				PR(nm("write.%s.%zu.%s", b, n, atn[k]), write(rw, p, n));
				PR(nm("pwrite.%s.%zu.%s", b, n, atn[k]), pwrite(wo, p, n, at[k]));
			}
			PR(nm("pwrite.%s.%zu.hole", b, n), pwrite(wo, p, n, fsize(rw) + 5000));
			PR(nm("write.%s.%zu.append", b, n), write(app, p, n));
			/* The iovec array itself, and iov_base, at the bad address. */
			struct iovec v[2] = {{p, n}, {buf, 16}}, w[2] = {{buf, 16}, {p, n}};
			PR(nm("readv.arr.%s.%zu", b, n), readv(rw, p, n ? 2 : 0));
			PR(nm("writev.arr.%s.%zu", b, n), writev(rw, p, n ? 2 : 0));
			PR(nm("preadv.base0.%s.%zu", b, n), preadv(ro, v, 2, 0));
			PR(nm("preadv.base1.%s.%zu", b, n), preadv(ro, w, 2, 0));
			PR(nm("pwritev.base0.%s.%zu", b, n), pwritev(wo, v, 2, 300));
			PR(nm("pwritev.base1.%s.%zu", b, n), pwritev(wo, w, 2, fsize(rw)));
			PR(nm("preadv2.base1.%s.%zu", b, n), preadv2(rw, w, 2, -1, 0));
		}
	}
}

/* --- iovec counts and lengths -------------------------------------------- */

static void iovecs(void)
{
	static struct iovec many[IOV_MAX + 1];
	for (int i = 0; i <= IOV_MAX; i++)
		many[i] = (struct iovec){buf + i, 0};
	int cnts[] = {-1, INT_MIN, IOV_MAX + 1, IOV_MAX, 0};
	for (size_t i = 0; i < N(cnts); i++) {
		int c = cnts[i];
		PR(nm("readv.cnt%d", c), readv(rw, many, c));
		PR(nm("writev.cnt%d", c), writev(rw, many, c));
		PR(nm("preadv.cnt%d", c), preadv(ro, many, c, 0));
		PR(nm("pwritev.cnt%d", c), pwritev(wo, many, c, 0));
		PR(nm("preadv2.cnt%d", c), preadv2(rw, many, c, -1, RWF_HIPRI));
		PR(nm("pwritev2.cnt%d", c), pwritev2(rw, many, c, 0, RWF_DSYNC));
		PR(nm("readv.cnt%d.wronly", c), readv(wo, many, c));
		PR(nm("writev.cnt%d.rdonly", c), writev(ro, many, c));
	}
	PR("readv.cnt0.nulliov", readv(rw, hide(NULL), 0));
	for (int i = 0; i < IOV_MAX; i++)
		many[i].iov_len = 1;
	PR("preadv.iovmax.len1", preadv(ro, many, IOV_MAX, 0));
	/* The kernel reads every length before it checks any base. */
	struct iovec neg[2] = {{KADDR, 16}, {buf, (size_t)-1}}, neg1[1] = {{buf, (size_t)-1}};
	PR("preadv.kaddr-then-neglen", preadv(ro, neg, 2, 0));
	PR("pwritev.kaddr-then-neglen", pwritev(wo, neg, 2, 0));
	PR("preadv.neglen", preadv(ro, neg1, 1, 0));
	PR("writev.neglen", writev(app, neg1, 1));
	struct iovec kl[3] = {{buf, 16}, {KADDR, 16}, {buf, 16}};
	PR("preadv.ok-then-kaddr", preadv(ro, kl, 3, 0));
	PR("pwritev.ok-then-kaddr", pwritev(wo, kl, 3, 40));
	PR("writev.ok-then-kaddr.append", writev(app, kl, 3));
	struct iovec big[2] = {{buf, 16}, {buf, 1UL << 46}}, one[1] = {{buf, 1UL << 46}};
	PR("preadv.ok-then-hugelen", preadv(ro, big, 2, 0));
	/* One segment: the kernel clamps its length to MAX_RW_COUNT first. */
	PR("preadv.hugelen.neareof", preadv(ro, one, 1, fsize(rw) - 16));
	PR("readv.hugelen.ateof", (lseek(rw, 0, SEEK_END), readv(rw, one, 1)));
	struct iovec two[2] = {{buf, SSIZE_MAX}, {buf, SSIZE_MAX}};
	PR("preadv.sum-overflow", preadv(ro, two, 2, 0));
}

/* --- offsets, seeks, sizes ----------------------------------------------- */

static void offsets(void)
{
	struct iovec v[1] = {{buf, 16}}, w[1] = {{data, 16}};
	/* O_APPEND ignores the offset but the kernel checks it: on a file of
	 * their own, as a wrong answer appends. */
	int sa = xopen("append.dat", O_WRONLY | O_APPEND | O_CREAT);
	int sr = xopen("append.dat", O_RDWR);
	long long offs[] = {-1, -2, LLONG_MIN, LLONG_MAX, LLONG_MAX - 16, LLONG_MAX - 8};
	for (size_t i = 0; i < N(offs); i++) {
		off_t o = (off_t)offs[i];
		PR(nm("pread.off%lld", offs[i]), pread(rw, buf, 16, o));
		PR(nm("pread0.off%lld", offs[i]), pread(rw, buf, 0, o));
		PR(nm("pread.off%lld.wronly", offs[i]), pread(wo, buf, 16, o));
		PR(nm("pwrite.off%lld.rdonly", offs[i]), pwrite(ro, data, 16, o));
		PR(nm("pwrite0.off%lld", offs[i]), pwrite(rw, data, 0, o));
		PR(nm("preadv.off%lld", offs[i]), preadv(ro, v, 1, o));
		PR(nm("preadv2.off%lld", offs[i]), preadv2(ro, v, 1, o, 0));
		PR(nm("preadv2.off%lld.unknownrwf", offs[i]), preadv2(ro, v, 1, o, RWF_UNKNOWN));
		PR(nm("ftruncate.len%lld.rdonly", offs[i]), ftruncate(ro, o));
		PR(nm("fallocate.off%lld.rdonly", offs[i]), fallocate(ro, 0, o, 16));
		if (offs[i] == LLONG_MAX - 16)
			continue; /* a write there really writes */
		PR(nm("pwrite.off%lld", offs[i]), pwrite(rw, data, 16, o));
		PR(nm("pwritev.off%lld", offs[i]), pwritev(wo, w, 1, o));
		PR(nm("pwritev2.off%lld", offs[i]), pwritev2(rw, w, 1, o, 0));
		PR(nm("pwrite.off%lld.append", offs[i]), pwrite(sa, data, 16, o));
		PR(nm("pwritev2.off%lld.rwfappend", offs[i]), pwritev2(sr, w, 1, o, RWF_APPEND));
		if (offs[i] >= 0)
			continue;
		PR(nm("ftruncate.len%lld", offs[i]), ftruncate(rw, o));
		PR(nm("truncate.len%lld", offs[i]), truncate(p_file, o));
		PR(nm("fallocate.off%lld", offs[i]), fallocate(rw, 0, o, 16));
		PR(nm("fallocate.len%lld", offs[i]), fallocate(rw, 0, 0, o));
		PEN(nm("posix_fallocate.off%lld", offs[i]), posix_fallocate(rw, o, 16));
		PEN(nm("posix_fallocate.len%lld", offs[i]), posix_fallocate(rw, 0, o));
		PR(nm("sync_file_range.off%lld", offs[i]), sync_file_range(rw, o, 16, 0));
	}
	PR("append.dat.size", fsize(sr));
	close(sa), close(sr);
	PR("fallocate.len0", fallocate(rw, 0, 0, 0));
	PR("fallocate.past-max", fallocate(rw, 0, LLONG_MAX - 8, 16));
	PR("fallocate.badmode", fallocate(rw, 0x7f00, 0, 16));
	PR("fallocate.punch-nokeep", fallocate(rw, FALLOC_FL_PUNCH_HOLE, 0, 16));
	PEN("posix_fallocate.len0", posix_fallocate(rw, 0, 0));
	PEN("posix_fallocate.past-max", posix_fallocate(rw, LLONG_MAX - 8, 16));

	/* lseek: whence, overflow, and I/O at the far end of the offset range. */
	off_t eof = fsize(rw);
	int whences[] = {-1, 5, 100, INT_MAX};
	for (size_t i = 0; i < N(whences); i++) {
		PR(nm("lseek.whence%d", whences[i]), lseek(rw, 0, whences[i]));
		PR(nm("lseek.whence%d.badfd", whences[i]), lseek(-1, 0, whences[i]));
	}
	PR("lseek.set-1", lseek(rw, -1, SEEK_SET));
	PR("lseek.cur-big", (lseek(rw, 10, SEEK_SET), lseek(rw, -11, SEEK_CUR)));
	PR("lseek.end-past-start", lseek(rw, -eof - 1, SEEK_END));
	PR("lseek.set-llmax", lseek(rw, LLONG_MAX, SEEK_SET));
	PR("lseek.cur+1-overflow", lseek(rw, 1, SEEK_CUR));
	PR("read.at-llmax", read(rw, buf, 16));
	PR("read0.at-llmax", read(rw, buf, 0));
	PR("write.at-llmax", write(rw, data, 16));
	PR("readv.at-llmax", readv(rw, v, 1));
	PR("lseek.set-llmax-16", lseek(rw, LLONG_MAX - 16, SEEK_SET));
	PR("read.at-llmax-16", read(rw, buf, 16));
	int fds[] = {rw, ro, wo};
	const char *fdn[] = {"rw", "ro", "wo"};
	const char *wn[] = {"0", "eof-1", "eof", "eof+1000", "-1", "llmax"};
	long long where[] = {0, eof - 1, eof, eof + 1000, -1, LLONG_MAX};
	for (int f = 0; f < 3; f++)
		for (size_t i = 0; i < N(where); i++) {
			int fd = fds[f];
			PR(nm("lseek.data.%s.%s", wn[i], fdn[f]), lseek(fd, where[i], SEEK_DATA));
			PR(nm("lseek.hole.%s.%s", wn[i], fdn[f]), lseek(fd, where[i], SEEK_HOLE));
		}
	PR("lseek.cur-after-seekdata", lseek(rw, 0, SEEK_CUR) - eof);
	lseek(rw, 0, SEEK_SET);

	/* Real I/O at the far end, on a file of its own. */
	int h = xopen("huge.dat", O_RDWR | O_CREAT | O_TRUNC);
	PR("huge.pwrite.llmax-10", pwrite(h, data, 10, LLONG_MAX - 10));
	PR("huge.size", fsize(h));
	PR("huge.pwrite.llmax-9.n10", pwrite(h, data, 10, LLONG_MAX - 9));
	PR("huge.pread.llmax-10", pread(h, buf, 10, LLONG_MAX - 10));
	PR("huge.read.at-end", (lseek(h, 0, SEEK_END), read(h, buf, 10)));
	PR("huge.write.at-end", write(h, data, 10));
	PR("huge.ftruncate0", ftruncate(h, 0));
	PR("huge.ftruncate.llmax", ftruncate(h, LLONG_MAX));
	PR("huge.ftruncate.llmax.size", fsize(h));
	close(h);
}

/* --- RWF flags ----------------------------------------------------------- */

static void rwf_flags(void)
{
	struct iovec v[1] = {{buf, 16}}, w[1] = {{data, 16}};
	int flags[] = {RWF_UNKNOWN,	      (int)0x80000000U,		0x100,
		       0x40 /* RWF_ATOMIC */, 0x80 /* RWF_DONTCACHE */, RWF_APPEND};
	int fds[] = {rw, ro, wo, app, opath, dfd, -1, CLOSEDFD};
	const char *fdn[] = {"rw", "ro", "wo", "app", "opath", "dir", "m1", "closed"};
	for (size_t i = 0; i < N(flags); i++)
		for (size_t f = 0; f < N(fds); f++) {
			const char *k = fdn[f];
			int fd = fds[f], fl = flags[i];
			PR(nm("preadv2.rwf%#x.%s", fl, k), preadv2(fd, v, 1, 0, fl));
			PR(nm("preadv2.rwf%#x.pos.%s", fl, k), preadv2(fd, v, 1, -1, fl));
			PR(nm("pwritev2.rwf%#x.%s", fl, k), pwritev2(fd, w, 1, 64, fl));
			PR(nm("pwritev2.rwf%#x.pos.%s", fl, k), pwritev2(fd, w, 1, -1, fl));
		}
	int m1 = (int)(long)hide((void *)-1L); /* a literal -1 trips -Wstringop-overflow */
	PR("preadv2.unknownrwf.cnt-1", preadv2(rw, v, m1, 0, RWF_UNKNOWN));
	PR("preadv2.unknownrwf.off-2", preadv2(rw, v, 1, -2, RWF_UNKNOWN));
	PR("pwritev2.unknownrwf.kaddr", pwritev2(rw, hide(KADDR), 1, 0, RWF_UNKNOWN));
	PR("lseek.cur-after-rwf", lseek(rw, 0, SEEK_CUR));
}

/* --- per-descriptor matrix ----------------------------------------------- */

static void fd_matrix(const char *k, int fd)
{
	char b[64];
	struct iovec rv[2] = {{b, 8}, {b + 8, 8}}, wv[2] = {{data, 8}, {data + 8, 8}};
	struct stat st;
	int n = -7;
	PR(nm("read.%s", k), read(fd, b, 16));
	PR(nm("read0.%s", k), read(fd, b, 0));
	PR(nm("write.%s", k), write(fd, data, 16));
	PR(nm("write0.%s", k), write(fd, data, 0));
	PR(nm("pread.%s", k), pread(fd, b, 16, 100));
	PR(nm("pwrite.%s", k), pwrite(fd, data, 16, 200));
	PR(nm("readv.%s", k), readv(fd, rv, 2));
	PR(nm("writev.%s", k), writev(fd, wv, 2));
	PR(nm("preadv.%s", k), preadv(fd, rv, 2, 50));
	PR(nm("pwritev.%s", k), pwritev(fd, wv, 2, 300));
	PR(nm("preadv2.%s", k), preadv2(fd, rv, 2, -1, 0));
	PR(nm("pwritev2.%s", k), pwritev2(fd, wv, 2, -1, 0));
	PR(nm("preadv2.hipri.%s", k), preadv2(fd, rv, 2, 8, RWF_HIPRI));
	PR(nm("pwritev2.dsync.%s", k), pwritev2(fd, wv, 2, 400, RWF_DSYNC));
	PR(nm("lseek.cur.%s", k), lseek(fd, 0, SEEK_CUR));
	PR(nm("lseek.set7.%s", k), lseek(fd, 7, SEEK_SET));
	PR(nm("ftruncate.%s", k), ftruncate(fd, 12288));
	PR(nm("fallocate.%s", k), fallocate(fd, 0, 0, 512));
	PEN(nm("posix_fallocate.%s", k), posix_fallocate(fd, 0, 512));
	PR(nm("fsync.%s", k), fsync(fd));
	PR(nm("fdatasync.%s", k), fdatasync(fd));
	PR(nm("sync_file_range.%s", k), sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE));
	PR(nm("sync_file_range.badflags.%s", k), sync_file_range(fd, 0, 0, 0x80));
	PR(nm("fstat.%s", k), fstat(fd, &st) ? -1 : S_ISREG(st.st_mode) ? st.st_size : 0);
	PR(nm("fstat.nullbuf.%s", k), fstat(fd, hide(NULL)));
	PR(nm("fstatat.empty.%s", k), fstatat(fd, "", &st, AT_EMPTY_PATH));
	PR(nm("fcntl.getfl.%s", k), fcntl(fd, F_GETFL));
	PR(nm("fcntl.getfd.%s", k), fcntl(fd, F_GETFD));
	PR(nm("fcntl.badcmd.%s", k), fcntl(fd, 0x7fff));
	PR(nm("fcntl.dupfd-1.%s", k), fcntl(fd, F_DUPFD, -1));
	/* FIONREAD answers size minus the kernel's file offset. */
	PR(nm("ioctl.fionread.%s", k), ioctl(fd, FIONREAD, &n));
	out(nm("ioctl.fionread.value.%s", k), n, 0);
	PFD(nm("dup.%s", k), dup(fd));
	PR(nm("dup2.self.%s", k), dup2(fd, fd) == fd ? 0 : -1);
	PR(nm("dup3.self.%s", k), dup3(fd, fd, 0));
	PR(nm("dup3.badflags.%s", k), dup3(fd, CLOSEDFD + 1, 0x1234));
	PR(nm("dup2.neg.%s", k), dup2(fd, -1));
	PFD(nm("dup3.cloexec.%s", k), dup3(fd, CLOSEDFD + 1, O_CLOEXEC));
	PFD(nm("openat.rel.%s", k), openat(fd, "file.dat", O_RDONLY));
}

/* --- descriptors --------------------------------------------------------- */

static void descriptors(void)
{
	int bad[] = {-1, CLOSEDFD, HUGEFD, INT_MAX, INT_MIN, AT_FDCWD};
	for (size_t i = 0; i < N(bad); i++) {
		PR(nm("close.bad%zu", i), close(bad[i]));
		PR(nm("dup2.from-bad%zu", i), dup2(bad[i], CLOSEDFD + 2));
		PR(nm("dup2.onto-self.bad%zu", i), dup2(bad[i], bad[i]));
		PR(nm("dup3.from-bad%zu", i), dup3(bad[i], CLOSEDFD + 2, 0));
		PR(nm("fcntl.setfl.bad%zu", i), fcntl(bad[i], F_SETFL, O_APPEND));
	}
	int fds[] = {rw, dfd, opath};
	for (int i = 0; i < 3; i++) {
		int d = dup(fds[i]);
		PR(nm("close.dup%d", i), close(d));
		PR(nm("close.dup%d.again", i), close(d));
		PR(nm("read.dup%d.closed", i), read(d, buf, 1));
	}
	PR("close_range.first>last", close_range(10, 5, 0));
	PR("close_range.past-table", close_range(HUGEFD, HUGEFD + 10U, 0));
	/* A failed close_range leaves the descriptor as it was. */
	int cr = xopen(p_file, O_RDWR);
	PR("close_range.setup-read", read(cr, buf, 5));
	PR("close_range.badflags", close_range((unsigned)cr, (unsigned)cr, 1U << 5));
	PR("close_range.badflags.pos", lseek(cr, 0, SEEK_CUR));
	PR("close_range.badflags.read", read(cr, buf, 4));
	close(cr);
	struct flock fl = {.l_type = 0x77, .l_whence = SEEK_SET};
	PR("fcntl.setlk.badtype", fcntl(rw, F_SETLK, &fl));
	PR("fcntl.getlk.null", fcntl(rw, F_GETLK, hide(NULL)));
	PFD("fcntl.dupfd-cloexec", fcntl(rw, F_DUPFD_CLOEXEC, CLOSEDFD + 3));
	/* A descriptor fcntl calls closed is closed for fstat too. */
	int hidden = 0;
	struct stat st;
	for (int fd = 3; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && fstat(fd, &st) == 0)
			hidden++;
	out("hidden-fds-visible-to-fstat", hidden > 0, 0);
}

/* --- paths: stat, open, unlink, rename, truncate -------------------------- */

static void paths(void)
{
	struct stat st;
	struct statx sx;
	static char longname[300], longpath[PATH_MAX + 20];
	memset(longname, 'n', sizeof(longname) - 1), memset(longpath, 'd', sizeof(longpath) - 1);
	memset(straddle, 'p', 100);
	/* The last two names may exist: nothing creates or removes them. */
	const char *names[] = {
		NULL,	      (char *)1, KADDR,	   hole,     straddle, "", "/nonexistent/x",
		"file.dat/x", longname,	 longpath, "nofile", "loop"};
	const char *pn[] = {"null",  "one",    "kaddr",	   "unmapped", "straddle", "empty",
			    "noent", "notdir", "longname", "longpath", "nofile",   "loop"};
	for (size_t i = 0; i < N(names); i++) {
		const char *p = hide(names[i]);
		PR(nm("stat.%s", pn[i]), stat(p, &st));
		PR(nm("lstat.%s", pn[i]), lstat(p, &st));
		PR(nm("statx.%s", pn[i]), statx(AT_FDCWD, p, 0, STATX_BASIC_STATS, &sx));
		PFD(nm("open.%s", pn[i]), open(p, O_RDONLY));
		PR(nm("truncate.%s", pn[i]), truncate(p, 0));
		PFD(nm("open.trunc.%s", pn[i]), open(p, O_WRONLY | O_TRUNC | O_NOFOLLOW));
		if (i >= N(names) - 2)
			continue;
		PFD(nm("open.creat.%s", pn[i]), open(p, O_RDONLY | O_CREAT | O_EXCL, 0644));
		PFD(nm("creat.%s", pn[i]), creat(p, 0644));
		PR(nm("unlink.%s", pn[i]), unlink(p));
		PR(nm("rename.from.%s", pn[i]), rename(p, "renamed"));
		PR(nm("rename.to.%s", pn[i]), rename("aux.dat", p));
		PR(nm("remove.%s", pn[i]), remove(p));
	}
	/* Bad result buffers. */
	void *bufs[] = {NULL, (void *)1, KADDR, hole, USEREND, rdonly_page, straddle};
	for (size_t i = 0; i < N(bufs); i++) {
		void *b = hide(bufs[i]);
		PR(nm("stat.buf%zu", i), stat("file.dat", b));
		PR(nm("fstat.buf%zu", i), fstat(rw, b));
		PR(nm("statx.buf%zu", i), statx(AT_FDCWD, "file.dat", 0, STATX_BASIC_STATS, b));
	}
	PR("stat.size", stat("file.dat", &st) ? -1 : st.st_size);
	PR("statx.size", statx(rw, "", AT_EMPTY_PATH, STATX_SIZE, &sx) ? -1 : (long)sx.stx_size);
	PR("statx.badmask", statx(AT_FDCWD, "file.dat", 0, 0x80000000U, &sx));
	PR("statx.badflags", statx(AT_FDCWD, "file.dat", 0x7000000, STATX_BASIC_STATS, &sx));
	PR("fstatat.badflags", fstatat(AT_FDCWD, "file.dat", &st, 0x7000000));
	PR("fstatat.badfd", fstatat(CLOSEDFD, "file.dat", &st, 0));
	PFD("open.dir-on-file", open("file.dat", O_RDONLY | O_DIRECTORY));
	PFD("open.excl-existing", open("file.dat", O_RDWR | O_CREAT | O_EXCL, 0644));
	PFD("open.dir-wronly", open("sub", O_WRONLY));
	PFD("open.tmpfile-rdonly", open("sub", O_TMPFILE | O_RDONLY, 0600));
	PFD("open.nofollow-link", open("loop", O_RDONLY | O_NOFOLLOW));
	PFD("open.allflags", open("file.dat", -1, 0644));
	PFD("openat.badfd", openat(CLOSEDFD, "file.dat", O_RDONLY));
	PFD("openat.filefd", openat(rw, "x", O_RDONLY));
	PFD("creat.dir", creat("sub", 0644));
	PR("unlink.dir", unlink("sub"));
	PR("unlinkat.badflags", unlinkat(dfd, "nofile", 0x1234));
	PR("unlinkat.rmdir-file", unlinkat(AT_FDCWD, "file.dat", AT_REMOVEDIR));
	PR("rename.dir-into-self", rename("sub", "sub/x"));
	PR("rename.file-over-dir", rename("file.dat", "sub"));
	PR("rename.same", rename("file.dat", "file.dat"));
	PR("rename.noent-dir", rename("file.dat", "nodir/x"));
	PR("renameat2.badflags", renameat2(AT_FDCWD, "file.dat", AT_FDCWD, "x", 0x80));
	PR("renameat2.noreplace", renameat2(AT_FDCWD, "aux.dat", AT_FDCWD, "file.dat", 1));
	PR("renameat2.exchange-noent", renameat2(AT_FDCWD, "file.dat", AT_FDCWD, "nofile", 2));
	PR("truncate.dir", truncate("sub", 0));
}

/* --- timestamps --------------------------------------------------------- */

static void timestamps(void)
{
	struct timespec ts[2] = {{1000000000, 5}, {1000000000, 7}};
	struct timespec bad[2] = {{0, -5}, {0, 2000000000}};
	struct timeval tv[2] = {{1000000000, 0}, {1000000000, 0}};
	struct stat st;
	PR("utimensat.badtimes", utimensat(AT_FDCWD, "file.dat", hide((void *)1), 0));
	PR("utimensat.badnsec", utimensat(AT_FDCWD, "file.dat", bad, 0));
	PR("utimensat.badflags", utimensat(AT_FDCWD, "file.dat", ts, 0x1234));
	PR("utimensat.closedfd", utimensat(CLOSEDFD, "file.dat", ts, 0));
	PR("utimensat.noent", utimensat(AT_FDCWD, "nofile", NULL, 0));
	PR("utimensat.nullpath", utimensat(rw, hide(NULL), ts, 0));
	PR("futimens.badfd", futimens(-1, ts));
	PR("futimens.badtimes", futimens(rw, hide((void *)1)));
	PR("futimens.badnsec", futimens(wo, bad));
	PR("futimens.opath", futimens(opath, ts));
	PR("futimens.dir", futimens(dfd, ts));
	PR("utimes.null", utimes(hide(NULL), tv));
	PR("utimes.noent", utimes("nofile", tv));
	PR("lutimes.loop", lutimes("loop", tv));
	/* Times set on a file with staged data hold after its close. */
	const char *tn[] = {"times0.dat", "times1.dat", "times2.dat"};
	for (int i = 0; i < 3; i++) {
		int t = xopen(tn[i], O_RDWR | O_CREAT | O_TRUNC);
		PR(nm("times%d.write", i), write(t, data, 100));
		PR(nm("times%d.set", i), !i    ? futimens(t, ts) :
					 i < 2 ? utimensat(dfd, tn[i], ts, 0) :
						 utimes(tn[i], tv));
		PR(nm("times%d.close", i), close(t));
		PR(nm("times%d.mtime-ns", i),
		   stat(tn[i], &st) ? -1 : st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec);
	}
}

/* --- mmap (on a file of its own: a mapping hands the file to the kernel) - */

static void maps(void)
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

static void transfers(void)
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

static void misc(void)
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
		out(nm("sigaction.readback.%d.flags", s), old.sa_flags & ~0x04000000, 0);
		int bits = (old.sa_handler == SIG_IGN) * 4;
		bits += sigismember(&old.sa_mask, SIGKILL) * 2 + sigismember(&old.sa_mask, SIGUSR1);
		out(nm("sigaction.readback.%d.ign-kill-usr1", s), bits, 0);
		PR(nm("signal.reset.%d", s), signal(s, SIG_DFL) == SIG_IGN ? 1 : -1);
	}
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
static void hazards(void)
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

int main(int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[2], "--run") != 0) {
		puts("skipped: errno_diff DIR --run (tests/suites/errno.sh compares its output)");
		return T_EXIT_SKIP;
	}
	char *dir = realpath(argv[1], NULL);
	T_REQUIRE(dir && chdir(dir) == 0, "chdir %s", argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0); /* every line out before a crash */
	setup(dir);
	bad_buffers();
	iovecs();
	offsets();
	rwf_flags();
	const char *kn[] = {"m1",   "closed", "huge",  "cwd", "rdonly", "wronly",
			    "rdwr", "append", "opath", "dir", "duprw",	"dupro"};
	int kfd[] = {-1, CLOSEDFD, HUGEFD, AT_FDCWD, ro, wo, rw, app, opath, dfd, duprw, dupro};
	for (size_t i = 0; i < N(kfd); i++)
		fd_matrix(kn[i], kfd[i]);
	descriptors();
	paths();
	timestamps();
	maps();
	transfers();
	misc();
	summary("sum.file", ro);
	summary("sum.out", outfd);
	int fds[] = {ro,    wo,	    rw,	    app,    opath,   dfd,  duprw,
		     dupro, aux_ro, aux_wo, aux_rw, aux_app, outfd};
	for (size_t i = 0; i < N(fds); i++)
		PR(nm("final.close%zu", i), close(fds[i]));
	/* The kernel's own view, past the library, once every fd is closed. */
	unsigned char *k = NULL;
	long ks = t_read_kernel(p_file, &k);
	out("kernel.file.size", ks, 0);
	out("kernel.file.fnv", fnv(k, ks), 0);
	free(k);
	hazards(); /* last: a hang there loses no other probe */
	puts("end");
	return 0;
}
