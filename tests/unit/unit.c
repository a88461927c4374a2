/* SPDX-License-Identifier: Apache-2.0 */
/* Description: the unit tests' runner of named cases (unit.h). */
#define _GNU_SOURCE
#include "unit.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

int u_checks, u_failures;
static struct u_case *cases, **cases_tail = &cases;
static const char *skipped;
static char tmp[PATH_MAX];

void u_register(struct u_case *c)
{
	*cases_tail = c;
	cases_tail = &c->next;
}

void u_skip(const char *why)
{
	skipped = why;
}

const char *u_tmpdir(void)
{
	if (tmp[0])
		return tmp;
	const char *base = getenv("TMPDIR");
	snprintf(tmp, sizeof(tmp), "%s/sfs-unit.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmp)) {
		perror(tmp);
		tmp[0] = '\0';
		return NULL;
	}
	return tmp;
}

static void rm_tmpdir(void)
{
	if (!tmp[0])
		return;
	DIR *d = opendir(tmp);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char p[PATH_MAX + 256];
		snprintf(p, sizeof(p), "%s/%s", tmp, de->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	if (rmdir(tmp) != 0)
		perror(tmp);
	tmp[0] = '\0';
}

static bool chosen(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	int ran = 0, skips = 0, failed = 0;
	for (int i = 1; i < argc; i++) {
		bool known = false;
		for (const struct u_case *c = cases; c; c = c->next)
			known |= strcmp(argv[i], c->name) == 0;
		if (!known) {
			fprintf(stderr, "%s: no case '%s'; cases:", base, argv[i]);
			for (const struct u_case *c = cases; c; c = c->next)
				fprintf(stderr, " %s", c->name);
			fprintf(stderr, "\n");
			return U_EXIT_FAIL;
		}
	}
	for (const struct u_case *c = cases; c; c = c->next) {
		if (!chosen(c->name, argc, argv))
			continue;
		u_checks = u_failures = 0;
		skipped = NULL;
		c->fn();
		rm_tmpdir();
		ran++;
		if (u_failures) {
			failed++;
			printf("  %s/%s: %s: %d of %d checks FAILED\n", base, c->name, c->what,
			       u_failures, u_checks);
		} else if (skipped) {
			skips++;
			printf("  %s/%s: skipped: %s\n", base, c->name, skipped);
		} else {
			printf("  %s/%s: %s: %d checks ok\n", base, c->name, c->what, u_checks);
		}
		fflush(stdout);
	}
	if (failed)
		return U_EXIT_FAIL;
	return ran && skips == ran ? U_EXIT_SKIP : U_EXIT_PASS;
}
