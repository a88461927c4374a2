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
 * after it; the checksums at the end catch the rest. The probes are in
 * errno_diff/ (probes.h), one file per group. */
#define _GNU_SOURCE
#include "errno_diff/probes.h"

char *p_file;
int ro, wo, rw, app, opath, dfd, duprw, dupro, aux_ro, aux_wo, aux_rw, aux_app, outfd;
char buf[1 << 16], data[256];
char *rdonly_page, *straddle, *hole;

/* --- output -------------------------------------------------------------- */

char *deferred; /* while set, lines collect here (RLIMIT_FSIZE probes) */

void out(const char *name, long ret, int err)
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
const char *nm(const char *fmt, ...)
{
	static char name[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return name;
}

/* A call that returns an error number (posix_fallocate, posix_spawn). */
void out_en(const char *name, int r)
{
	out(name, r, r);
}

/* mmap: 0 for a mapping (unmapped again at once), -1 and errno. */
void pmap(const char *name, size_t len, int prot, int flags, int fd, off_t off)
{
	void *m = mmap(NULL, len, prot, flags, fd, off);
	out(name, m == MAP_FAILED ? -1 : 0, m == MAP_FAILED ? errno : 0);
	if (m != MAP_FAILED)
		munmap(m, len);
}

/* Hides a value from the compiler (no -Wnonnull, no object-size checks). */
void *hide(const void *p)
{
	void *q = (void *)p;
	__asm__ volatile("" : "+r"(q));
	return q;
}

off_t fsize(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_size : -1;
}

long fnv(const unsigned char *p, long n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (long i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return (long)(h >> 1);
}

/* Size and checksum of a file as the application sees it (through fd). */
void summary(const char *tag, int fd)
{
	static unsigned char whole[1 << 22];
	out(nm("%s.size", tag), (long)fsize(fd), 0);
	ssize_t got = pread(fd, whole, sizeof(whole), 0);
	out(nm("%s.read", tag), (long)got, got < 0 ? errno : 0);
	out(nm("%s.fnv", tag), fnv(whole, got), 0);
}

/* --- fixtures ------------------------------------------------------------ */

int xopen(const char *p, int flags)
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
off_t restage(void)
{
	if (write(app, data, 64) != 64)
		out("restage", -1, errno);
	return fsize(rw);
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
