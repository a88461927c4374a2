/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the cost of a process start alone: posix_spawn of a command
 * N times (stdout to /dev/null) and a wait for each, with VAR=VALUE pairs
 * put into the children's environment only, so that this program itself
 * runs without the library (bench/src/spawn.c runs under it, as a shell
 * does). Prints the mean µs a spawn and wait.
 *   cc -O2 -o childenv childenv.c
 *   ./childenv N "PROGRAM ARG..." [VAR=VALUE...] */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: childenv N \"PROGRAM ARG...\" [VAR=VALUE...]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	char *args[32];
	int k = 0;
	for (char *t = strtok(argv[2], " "); t && k < 31; t = strtok(NULL, " "))
		args[k++] = t;
	args[k] = NULL;
	for (int i = 3; i < argc; i++)
		putenv(argv[i]); /* after this program's start: the children's only */
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int st;
		if (posix_spawn(&pid, args[0], &fa, NULL, args, environ) != 0 ||
		    waitpid(pid, &st, 0) != pid) {
			perror("childenv");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n);
	return 0;
}
