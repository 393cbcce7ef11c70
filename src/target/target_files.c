/* target_files.c - find here the files a target mapped: --solib-path by base name, then
   --sysroot as a prefix, else the path itself. */
#include "target_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* DIR (LEN bytes) joined with NAME when that is a regular file, else NULL. */
static char *try_join(const char *dir, size_t len, const char *name)
{
	size_t n = len + 1 + strlen(name) + 1;
	char *p = malloc(n);

	if (p == NULL)
		return NULL;
	snprintf(p, n, "%.*s%s%s", (int)len, dir,
		 len > 0 && dir[len - 1] != '/' && name[0] != '/' ? "/" : "", name);
	if (is_file(p))
		return p;
	free(p);
	return NULL;
}

char *target_find_file(const char *path, const mp_target_opts *opts)
{
	const char *base = strrchr(path, '/');
	const char *dirs = opts != NULL ? opts->solib_path : NULL;
	char *found;

	base = base != NULL ? base + 1 : path;
	while (dirs != NULL && *dirs != '\0' && *base != '\0') {
		size_t len = strcspn(dirs, ":");

		if (len > 0 && (found = try_join(dirs, len, base)) != NULL)
			return found;
		dirs += len;
		if (*dirs == ':')
			dirs++;
	}
	if (opts != NULL && opts->sysroot != NULL && opts->sysroot[0] != '\0')
		return path[0] == '/' ? try_join(opts->sysroot, strlen(opts->sysroot), path) : NULL;
	return path[0] == '/' && is_file(path) ? strdup(path) : NULL;
}
