/* target_files.c - find here the files a target mapped: --solib-path by base name, then
   --sysroot as a prefix (unless the path already lies inside it), else the path itself. */
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

/* Whether PATH lies inside directory ROOT (LEN bytes, no trailing '/'). */
static bool under(const char *root, size_t len, const char *path)
{
	return strncmp(path, root, len) == 0 && path[len] == '/';
}

/* The file a target mapped at absolute PATH, under SYSROOT. A core written from outside a chroot (gcore of a
   chrooted process) already names its files as this machine sees them, inside the root: those are taken as
   they are, whether the root is given by that name or by another one that resolves to it. */
static char *find_in_sysroot(const char *sysroot, const char *path)
{
	size_t len = strlen(sysroot);
	char *real;

	while (len > 1 && sysroot[len - 1] == '/')
		len--;
	if (under(sysroot, len, path))
		return is_file(path) ? strdup(path) : NULL;
	if ((real = realpath(sysroot, NULL)) != NULL) {
		bool inside = under(real, strlen(real), path);

		free(real);
		if (inside)
			return is_file(path) ? strdup(path) : NULL;
	}
	return try_join(sysroot, len, path);
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
		return path[0] == '/' ? find_in_sysroot(opts->sysroot, path) : NULL;
	return path[0] == '/' && is_file(path) ? strdup(path) : NULL;
}
