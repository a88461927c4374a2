/* SPDX-License-Identifier: Apache-2.0 */
/* Description: appends of a process killed by SIGKILL are in the file for
 * a process that was running all along, round after round. Each round a
 * child appends records to a new file (enough for a lease: under the
 * library they are staged), says so, and is killed; this process then
 * opens the file only to read it and must read every record. Under the
 * library the open looks up the dead child's store only while the census
 * of bound stores says one may exist (staging/census.h): its adoption in
 * one round takes the count away, the next child's store counts again,
 * and a census that erred low would skip a lookup and lose a round's
 * records. As the kernel's page cache keeps them, in every mode. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define ROUNDS 4
#define RECORDS 64
#define RECORD 1024

static void round_trip(const char *dir, int round)
{
	char name[32];
	snprintf(name, sizeof(name), "census.%d", round);
	const char *path = t_path(dir, name);
	int p;
	pid_t c = t_fork_pipe(&p);
	if (c == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
		if (fd < 0)
			_exit(1);
		unsigned char rec[RECORD];
		for (int i = 0; i < RECORDS; i++) {
			t_fill(rec, RECORD, (unsigned)round + 1, (long)i * RECORD);
			if (write(fd, rec, RECORD) != RECORD)
				_exit(1);
		}
		write(p, "w", 1);
		for (;;)
			pause(); /* killed here, the appends not relinked */
	}
	char ch;
	bool wrote = read(p, &ch, 1) == 1;
	close(p);
	kill(c, SIGKILL);
	int st;
	waitpid(c, &st, 0);
	T_REQUIRE(wrote, "round %d: the child did not write its records", round);
	int fd = open(path, O_RDONLY);
	T_REQUIRE(fd >= 0, "round %d: open", round);
	unsigned char *got;
	long size;
	long n = t_read_fd(fd, &got, &size);
	close(fd);
	unsigned char want[RECORD];
	long bad = -1;
	for (int i = 0; i < RECORDS && bad < 0 && n == (long)RECORDS * RECORD; i++) {
		t_fill(want, RECORD, (unsigned)round + 1, (long)i * RECORD);
		if (memcmp(got + (long)i * RECORD, want, RECORD) != 0)
			bad = i;
	}
	T_CHECK(n == (long)RECORDS * RECORD && bad < 0,
		"round %d: read %ld bytes (want %d), record %ld differs", round, n,
		RECORDS * RECORD, bad);
	free(got);
}

int main(int argc, char **argv)
{
	T_REQUIRE(argc == 2, "usage: census DIR");
	for (int r = 0; r < ROUNDS; r++)
		round_trip(argv[1], r);
	return t_result();
}
