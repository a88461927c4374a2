/* SPDX-License-Identifier: Apache-2.0 */
/* Description: process start, the cost every command of a shell script or a
 * build pays: posix_spawn of PROGRAM (with its arguments) and a wait for it,
 * N times, in DIR as the working directory. The children inherit the
 * environment, so under `splitfs run` each of them loads and starts the
 * library. Prints the median and the mean µs per spawn-and-wait as JSON
 * lines (no floor: nothing is copied).
 * With --fork, each start is a fork and an execve in the child, as bash
 * and make start a command: the child runs on a copy of the parent's
 * memory until its exec, so every page the parent or the child writes in
 * between is copied (the atfork handlers' and the resets' included).
 *   spawn [--fork] DIR N PROGRAM [ARG...] */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/bench.h"

extern char **environ;

/* One start of argv[0]; its pid, or -1. */
static pid_t start(bool by_fork, char **argv)
{
	pid_t pid;
	if (!by_fork) {
		int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
		if (rc != 0)
			fprintf(stderr, "spawn: %s: error %d\n", argv[0], rc);
		return rc == 0 ? pid : -1;
	}
	pid = fork();
	if (pid == 0) {
		execve(argv[0], argv, environ);
		_exit(127);
	}
	if (pid < 0)
		perror("spawn: fork");
	return pid;
}

int main(int argc, char **argv)
{
	bool by_fork = argc > 1 && strcmp(argv[1], "--fork") == 0;
	if (by_fork) {
		argc--;
		argv++;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: spawn [--fork] DIR N PROGRAM [ARG...]\n");
		return 2;
	}
	int n = atoi(argv[2]);
	if (n < 1 || chdir(argv[1]) != 0) {
		perror("spawn");
		return 2;
	}
	double *t = calloc((size_t)n, sizeof(double));
	if (!t)
		return 1;
	double sum = 0;
	for (int i = 0; i < n; i++) {
		int status;
		double a = bench_now();
		pid_t pid = start(by_fork, argv + 3);
		if (pid < 0)
			return 1;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "spawn: %s failed (status %#x)\n", argv[3], status);
			return 1;
		}
		t[i] = bench_now() - a;
		sum += t[i];
	}
	qsort(t, (size_t)n, sizeof(double), bench_cmp_double);
	const char *name = by_fork ? "fork" : "spawn";
	printf("{\"metric\":\"%s_us\",\"value\":%.1f,\"unit\":\"us\",\"better\":\"lower\"}\n", name,
	       t[n / 2] / 1e3);
	printf("{\"metric\":\"%s_mean_us\",\"value\":%.1f,\"unit\":\"us\",\"better\":\"lower\"}\n",
	       name, sum / n / 1e3);
	free(t);
	return 0;
}
