/* testbed.h - the symbols tests' way to the allocator test bed (tests/testbed): real c10 builds,
   the scenario driver and its cores. */
#ifndef MEMPROF_TESTS_SYMBOLS_TESTBED_H
#define MEMPROF_TESTS_SYMBOLS_TESTBED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Exit status that tells automake's harness "skipped". */
#define TESTBED_SKIP 77

/* Whether CUDA headers are here (what tests/testbed/c10/build.sh needs): $CUDA_HOME, then
   /usr/local/cuda. Without them the test bed cannot be built and the caller skips. */
static inline int testbed_have_cuda(void)
{
	const char *home = getenv("CUDA_HOME");
	char path[4096];

	snprintf(path, sizeof path, "%s/include/cuda_runtime_api.h",
		 home != NULL && home[0] != '\0' ? home : "/usr/local/cuda");
	return access(path, R_OK) == 0;
}

/* Skip (exit 77, saying why) unless the test bed can be built. */
static inline void testbed_require(const char *test)
{
	if (testbed_have_cuda())
		return;
	printf("%s: SKIP: no CUDA headers (CUDA_HOME or /usr/local/cuda): the test bed cannot be built\n",
	       test);
	exit(TESTBED_SKIP);
}

/* Run the test bed command CMD (relative to the source tree: "tests/testbed/c10/build.sh
   debug"), with ENV assignments before it, and return the last line it prints (malloc'd), or
   NULL when it fails. Its stderr goes to ours (the test log). */
static inline char *testbed_run(const char *env, const char *cmd)
{
	const char *top = getenv("top_srcdir");
	char line[4096], *last = NULL, *full;
	size_t size;
	FILE *p;

	if (top == NULL || top[0] == '\0')
		top = ".";
	size = strlen(top) + strlen(cmd) + (env != NULL ? strlen(env) : 0) + 8;
	full = malloc(size);
	if (full == NULL)
		return NULL;
	snprintf(full, size, "%s '%s'/%s", env != NULL ? env : "", top, cmd);
	p = popen(full, "r");
	free(full);
	if (p == NULL)
		return NULL;
	while (fgets(line, sizeof line, p) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '\0')
			continue;
		free(last);
		last = strdup(line);
	}
	if (pclose(p) != 0) {
		free(last);
		return NULL;
	}
	return last;
}

/* The lib/libc10_cuda.so of c10 build VARIANT (malloc'd), or NULL when it cannot be built. */
static inline char *testbed_c10(const char *variant)
{
	char cmd[256], *dir, *lib;
	size_t size;

	snprintf(cmd, sizeof cmd, "tests/testbed/c10/build.sh %s", variant);
	dir = testbed_run(NULL, cmd);
	if (dir == NULL) {
		fprintf(stderr, "tests/testbed/c10/build.sh %s failed\n", variant);
		return NULL;
	}
	size = strlen(dir) + 32;
	lib = malloc(size);
	if (lib != NULL)
		snprintf(lib, size, "%s/lib/libc10_cuda.so", dir);
	free(dir);
	return lib;
}

#endif
