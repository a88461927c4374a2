/* SPDX-License-Identifier: Apache-2.0 */
/* Description: process start, the cost every command of a shell script or a
 * build pays: posix_spawn of PROGRAM (with its arguments) and a wait for it,
 * N times, in DIR as the working directory. The children inherit the
 * environment, so under `splitfs run` each of them loads and starts the
 * library. Prints the median and the mean µs per spawn-and-wait as JSON
 * lines (no floor: nothing is copied).
 *   spawn DIR N PROGRAM [ARG...] */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/bench.h"

extern char **environ;

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: spawn DIR N PROGRAM [ARG...]\n");
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
		pid_t pid;
		int status;
		double a = bench_now();
		int rc = posix_spawn(&pid, argv[3], NULL, NULL, argv + 3, environ);
		if (rc != 0) {
			fprintf(stderr, "spawn: %s: error %d\n", argv[3], rc);
			return 1;
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "spawn: %s failed (status %#x)\n", argv[3], status);
			return 1;
		}
		t[i] = bench_now() - a;
		sum += t[i];
	}
	qsort(t, (size_t)n, sizeof(double), bench_cmp_double);
	printf("{\"metric\":\"spawn_us\",\"value\":%.1f,\"unit\":\"us\",\"better\":\"lower\"}\n",
	       t[n / 2] / 1e3);
	printf("{\"metric\":\"spawn_mean_us\",\"value\":%.1f,\"unit\":\"us\",\"better\":\"lower\"}\n",
	       sum / n / 1e3);
	free(t);
	return 0;
}
