/* SPDX-License-Identifier: Apache-2.0 */
/* errno probes: descriptors, paths, timestamps (probes.h). */
#define _GNU_SOURCE
#include "probes.h"

/* --- descriptors --------------------------------------------------------- */

void descriptors(void)
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

void paths(void)
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

void timestamps(void)
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
