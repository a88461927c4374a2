/* SPDX-License-Identifier: Apache-2.0 */
/* Description: in POSIX mode the operation log only makes fdatasync faster
 * (src/fs/logsync.h), so a log that cannot be made is a performance event
 * (stats: log_unavailable), not a message on the program's stderr, where a
 * program that checks its own output would find it (SPLITFS_VERBOSE says
 * it). Under an RLIMIT_FSIZE of 512 KiB no log can be made (a log is at
 * least 1 MiB): this process appends and fdatasyncs enough records for the
 * log to be asked for, its stderr sent to a file, which must stay empty in
 * POSIX mode; the records must all be there, in every mode. Sync and
 * strict modes, which need the log for their promise, say so, as README
 * documents: not run under the limit there.
 *   quiet_logsync DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "helpers.h"

#define RECORDS 60
#define REC 200

int main(int argc, char **argv)
{
	T_REQUIRE(argc >= 2, "usage: quiet_logsync DIR");
	const char *mode = getenv("SPLITFS_MODE");
	bool posix = !mode || strcmp(mode, "posix") == 0;
	char *path = strdup(t_path(argv[1], "wal.log"));
	char *errpath = strdup(t_path(argv[1], "stderr.txt"));
	if (posix) {
		struct rlimit rl = {512 << 10, 512 << 10};
		T_REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0, "RLIMIT_FSIZE");
	}
	int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int saved = dup(2);
	T_REQUIRE(saved >= 0 && err >= 0 && dup2(err, 2) == 2, "stderr to %s", errpath);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	unsigned char rec[REC];
	bool ok = fd >= 0;
	for (int i = 0; ok && i < RECORDS; i++) {
		memset(rec, 'a' + i % 26, sizeof(rec));
		ok = write(fd, rec, REC) == REC && fdatasync(fd) == 0;
	}
	ok = ok && close(fd) == 0;
	T_REQUIRE(dup2(saved, 2) == 2 && close(saved) == 0 && close(err) == 0, "stderr back");
	T_CHECK(ok, "appending and syncing %d records", RECORDS);
	unsigned char *got = NULL;
	long n = t_read_kernel(errpath, &got);
	if (posix)
		T_CHECK(n == 0, "the library wrote %ld bytes on stderr: %.*s", n,
			(int)(n > 200 ? 200 : n), got ? (const char *)got : "");
	free(got);
	got = NULL;
	n = t_read_kernel(path, &got);
	bool same = n == (long)RECORDS * REC;
	for (long i = 0; same && i < n; i++)
		same = got[i] == 'a' + (i / REC) % 26;
	T_CHECK(same, "the file holds %ld bytes, not the %d records", n, RECORDS);
	free(got);
	free(path);
	free(errpath);
	return t_result();
}
