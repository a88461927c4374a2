/* SPDX-License-Identifier: Apache-2.0 */
/* errno probes: data calls with bad buffers, iovecs, offsets, RWF flags,
 * and the per-descriptor matrix (probes.h). */
#define _GNU_SOURCE
#include "probes.h"

/* --- data calls with bad buffers ---------------------------------------- */

void bad_buffers(void)
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

void iovecs(void)
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

void offsets(void)
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

void rwf_flags(void)
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

void fd_matrix(const char *k, int fd)
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
