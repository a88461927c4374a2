/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE
#include "helpers.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int t_failures;

bool t_under_splitfs(void)
{
	return dlsym(RTLD_DEFAULT, "splitfs_version") != NULL;
}

int t_scaled(int n, int least)
{
	const char *s = getenv("SFS_TEST_SCALE");
	char *end = NULL;
	double f = s ? strtod(s, &end) : 1.0;
	T_REQUIRE(!s || (end != s && *end == '\0' && f > 0.0 && f <= 1.0),
		  "SFS_TEST_SCALE=%s: want a factor in (0, 1]", s);
	int k = (int)(n * f + 0.5);
	return k < least ? least : k;
}

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

bool t_on_dax(const char *path)
{
	struct statx sx;
	return statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &sx) == 0 &&
	       (sx.stx_attributes & STATX_ATTR_DAX);
}

char *t_path(const char *dir, const char *name)
{
	static char buf[4][4096];
	static int i;
	char *p = buf[i++ % 4];
	snprintf(p, 4096, "%s/%s", dir, name);
	return p;
}

unsigned char t_byte(unsigned seed, long i)
{
	unsigned long x = (unsigned long)i * 2654435761u + seed * 40503u + 17;
	x ^= x >> 13;
	return (unsigned char)(x * 0x9E3779B1u >> 24);
}

void t_fill(unsigned char *buf, size_t n, unsigned seed, long start)
{
	for (size_t k = 0; k < n; k++)
		buf[k] = t_byte(seed, start + (long)k);
}

/* A system call no interposer can see (libc's syscall() is interposed). */
static long raw4(long nr, long a, long b, long c, long d)
{
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

long t_raw4(long nr, long a, long b, long c, long d)
{
	return raw4(nr, a, b, c, d);
}

long t_read_kernel(const char *path, unsigned char **buf)
{
	long fd = raw4(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct stat st;
	if (raw4(SYS_fstat, fd, (long)&st, 0, 0) != 0) {
		raw4(SYS_close, fd, 0, 0, 0);
		return -1;
	}
	*buf = malloc((size_t)st.st_size + 1);
	long got = 0;
	while (got < st.st_size) {
		long r = raw4(SYS_pread64, fd, (long)(*buf + got), st.st_size - got, got);
		if (r <= 0)
			break;
		got += r;
	}
	raw4(SYS_close, fd, 0, 0, 0);
	return got;
}

int t_write_kernel(const char *path, const unsigned char *buf, long n, long piece)
{
	long fd = raw4(SYS_openat, AT_FDCWD, (long)path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		       0644);
	if (fd < 0)
		return -1;
	long done = 0;
	while (done < n) {
		long len = n - done < piece ? n - done : piece;
		long w = raw4(SYS_pwrite64, fd, (long)(buf + done), len, done);
		if (w <= 0)
			break;
		done += w;
	}
	bool ok = done == n && raw4(SYS_fsync, fd, 0, 0, 0) == 0;
	return raw4(SYS_close, fd, 0, 0, 0) == 0 && ok ? 0 : -1;
}

bool t_kernel_holds_stream(const char *path, long n, unsigned seed)
{
	unsigned char *got = NULL;
	bool same = t_read_kernel(path, &got) == n;
	for (long i = 0; same && i < n; i++)
		same = got[i] == t_byte(seed, i);
	free(got);
	return same;
}

long t_read_fd(int fd, unsigned char **buf, long *size)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -1;
	*size = st.st_size;
	*buf = malloc((size_t)st.st_size + 1);
	long got = 0;
	while (got < st.st_size) {
		ssize_t r = pread(fd, *buf + got, (size_t)(st.st_size - got), got);
		if (r <= 0)
			break;
		got += r;
	}
	return got;
}

int t_result(void)
{
	if (t_failures)
		fprintf(stderr, "%d check(s) failed\n", t_failures);
	return t_failures ? T_EXIT_FAIL : T_EXIT_PASS;
}

/* --- the peer process ------------------------------------------------------ */

struct peer_req {
	int op;
	long a, b;
	size_t len;
	char path[1024];
	unsigned char data[4096];
};

struct peer_rep {
	long ret;
	size_t len;
	unsigned char data[65536];
};

static int peer_in = -1, peer_out = -1;
static pid_t peer_pid;

static long raw_open(const char *path, int flags)
{
	return raw4(SYS_openat, AT_FDCWD, (long)path, flags | O_CLOEXEC, 0644);
}

static bool full_io(int fd, void *buf, size_t n, bool rd)
{
	for (size_t done = 0; done < n;) {
		ssize_t r = rd ? read(fd, (char *)buf + done, n - done) :
				 write(fd, (const char *)buf + done, n - done);
		if (r <= 0)
			return false;
		done += (size_t)r;
	}
	return true;
}

static void peer_serve(int in, int out)
{
	static struct peer_req q;
	static struct peer_rep p;
	while (full_io(in, &q, sizeof(q), true)) {
		p.len = 0;
		long fd;
		switch (q.op) {
		case T_PEER_RAW_APPEND:
			fd = raw_open(q.path, O_WRONLY | O_APPEND | O_CREAT);
			p.ret = fd < 0 ? fd : raw4(SYS_write, fd, (long)q.data, (long)q.len, 0);
			if (fd >= 0)
				raw4(SYS_close, fd, 0, 0, 0);
			break;
		case T_PEER_RAW_TRUNCATE:
			p.ret = raw4(SYS_truncate, (long)q.path, q.a, 0, 0);
			break;
		case T_PEER_RAW_READ:
			fd = raw_open(q.path, O_RDONLY);
			p.ret = fd < 0 ? fd :
					 raw4(SYS_pread64, fd, (long)p.data,
					      q.a < (long)sizeof(p.data) ? q.a :
									   (long)sizeof(p.data),
					      q.b);
			if (fd >= 0)
				raw4(SYS_close, fd, 0, 0, 0);
			p.len = p.ret > 0 ? (size_t)p.ret : 0;
			break;
		case T_PEER_RAW_SIZE: {
			struct stat st;
			p.ret = raw4(SYS_newfstatat, AT_FDCWD, (long)q.path, (long)&st, 0);
			if (p.ret == 0)
				p.ret = st.st_size;
			break;
		}
		case T_PEER_RAW_FLOCK:
			fd = raw_open(q.path, O_RDONLY);
			p.ret = fd < 0 ? fd : raw4(SYS_flock, fd, LOCK_EX | LOCK_NB, 0, 0);
			if (fd >= 0)
				raw4(SYS_close, fd, 0, 0, 0);
			break;
		case T_PEER_LIBC_READ: {
			int lfd = open(q.path, O_RDONLY);
			ssize_t r = lfd < 0 ? -1 :
					      pread(lfd, p.data,
						    q.a < (long)sizeof(p.data) ? (size_t)q.a :
										 sizeof(p.data),
						    q.b);
			p.ret = r < 0 ? -errno : r;
			if (lfd >= 0)
				close(lfd);
			p.len = r > 0 ? (size_t)r : 0;
			break;
		}
		case T_PEER_LIBC_APPEND: {
			int lfd = open(q.path, O_WRONLY | O_APPEND);
			ssize_t r = lfd < 0 ? -1 : write(lfd, q.data, q.len);
			p.ret = r < 0 ? -errno : r;
			if (lfd >= 0)
				close(lfd);
			break;
		}
		default:
			p.ret = -EINVAL;
		}
		if (!full_io(out, &p, sizeof(p), false))
			break;
	}
	_exit(0);
}

void t_peer_start(void)
{
	int to[2], from[2];
	if (pipe(to) != 0 || pipe(from) != 0)
		exit(T_EXIT_FAIL);
	peer_pid = fork();
	if (peer_pid < 0)
		exit(T_EXIT_FAIL);
	if (peer_pid == 0) {
		close(to[1]);
		close(from[0]);
		peer_serve(to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	peer_in = from[0];
	peer_out = to[1];
}

long t_peer(int op, const char *path, long a, long b, const void *data, size_t len, void *out,
	    size_t outlen)
{
	static struct peer_req q;
	static struct peer_rep p;
	memset(&q, 0, sizeof(q));
	q.op = op;
	q.a = a;
	q.b = b;
	snprintf(q.path, sizeof(q.path), "%s", path);
	q.len = len < sizeof(q.data) ? len : sizeof(q.data);
	if (data)
		memcpy(q.data, data, q.len);
	if (!full_io(peer_out, &q, sizeof(q), false) || !full_io(peer_in, &p, sizeof(p), true)) {
		fprintf(stderr, "the peer process is gone\n");
		exit(T_EXIT_FAIL);
	}
	if (out)
		memcpy(out, p.data, p.len < outlen ? p.len : outlen);
	return p.ret;
}

void t_peer_stop(void)
{
	if (peer_out >= 0) {
		close(peer_out);
		close(peer_in);
		waitpid(peer_pid, NULL, 0);
		peer_out = peer_in = -1;
	}
}

pid_t t_fork_pipe(int *fd)
{
	int p[2];
	T_REQUIRE(pipe(p) == 0, "pipe");
	pid_t c = fork();
	T_REQUIRE(c >= 0, "fork");
	close(p[c == 0 ? 0 : 1]);
	*fd = p[c == 0 ? 1 : 0];
	return c;
}

pid_t t_fork_writer(const char *path, int flags, size_t len, int n, unsigned seed, bool hold)
{
	unsigned char buf[4096];
	T_REQUIRE(len <= sizeof(buf), "a block of %zu bytes", len);
	int ready;
	pid_t c = t_fork_pipe(&ready);
	if (c == 0) {
		int fd = open(path, flags | O_CREAT | O_TRUNC, 0644);
		for (int i = 0; i < n; i++) {
			t_fill(buf, len, seed, (long)i * (long)len);
			if (write(fd, buf, len) != (ssize_t)len)
				_exit(3);
		}
		if (!hold)
			_exit(0);
		write(ready, "r", 1);
		for (;;)
			pause();
	}
	if (hold) {
		char ch;
		T_REQUIRE(read(ready, &ch, 1) == 1, "the writer wrote");
	}
	close(ready);
	return c;
}

long t_stat_event(const char *file, const char *name)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	char line[256], key[128];
	long v = -1, n;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "event %127s %ld", key, &n) == 2 && strcmp(key, name) == 0)
			v = n;
	fclose(f);
	return v;
}

int t_run_self_stats(const char *dir, const char *role, const char *value, const char *stats)
{
	unlink(stats);
	const char *env[] = {role, value, "SPLITFS_STATS", "1", "SPLITFS_STATS_FILE", stats, NULL};
	return t_run_self(dir, env, NULL);
}

int t_run_self(const char *dir, const char *const env[], void (*in_child)(void))
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	T_REQUIRE(n > 0, "readlink /proc/self/exe");
	self[n] = 0;
	pid_t pid = fork();
	T_REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		for (int i = 0; env && env[i]; i += 2)
			if (env[i + 1])
				setenv(env[i], env[i + 1], 1);
		if (in_child)
			in_child();
		execl(self, self, dir, (char *)NULL);
		_exit(127);
	}
	int st;
	T_REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	return st;
}

const char *t_preload_after(const char *name)
{
	static char pre[8192 + 64];
	char exe[4096], shim[4096 + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	T_REQUIRE(n > 0, "readlink /proc/self/exe");
	exe[n] = 0;
	snprintf(shim, sizeof(shim), "%s/../shim/%s.so", dirname(exe), name);
	T_REQUIRE(access(shim, R_OK) == 0, "%s not built (make tests)", shim);
	const char *lp = getenv("LD_PRELOAD");
	snprintf(pre, sizeof(pre), "%s%s%s", lp ? lp : "", lp ? ":" : "", shim);
	return pre;
}
