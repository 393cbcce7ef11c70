/* mp_file.c - write a result file whole or not at all (a device, FIFO or symlink: through it). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "mp_file.h"

/* PATH written in place: what is there is not a file to replace (a device such as /dev/null, a FIFO, a
   symlink, whose target gets the data as a shell's redirection would give it). */
static mp_err write_through(const char *path, const void *data, size_t len, mp_diag *diag)
{
	FILE *f = fopen(path, "wb");

	if (f != NULL && (len == 0 || fwrite(data, 1, len, f) == len) && fclose(f) == 0)
		return MP_OK;
	if (f != NULL) {
		int saved = errno;

		fclose(f);
		errno = saved;
	}
	return mp_fail(diag, MP_E_ERRNO, "cannot write '%s': %s", path, strerror(errno));
}

mp_err mp_file_write(const char *path, const void *data, size_t len, mp_diag *diag)
{
	char tmp[4096];
	struct stat st;
	FILE *f;
	int saved;

	/* A regular file (or none yet) is replaced whole, through a temporary renamed over it; renaming over
	   anything else would replace the device or link itself (as root, /dev/null with a plain file). */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return write_through(path, data, len, diag);
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
		return mp_fail(diag, MP_E_USAGE, "'%s': file name too long", path);
	f = fopen(tmp, "wb");
	if (f != NULL && (len == 0 || fwrite(data, 1, len, f) == len) && fclose(f) == 0 && rename(tmp, path) == 0)
		return MP_OK;
	saved = errno;
	if (f != NULL)
		remove(tmp);
	return mp_fail(diag, MP_E_ERRNO, "cannot write '%s': %s", path, strerror(saved));
}

mp_err mp_file_mkdirs(const char *path, mp_diag *diag)
{
	char dir[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof dir)
		return mp_fail(diag, MP_E_USAGE, "cannot make '%s': %s", path, n == 0 ? "no name" : "name too long");
	memcpy(dir, path, n + 1);
	for (char *p = dir + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return mp_fail(diag, MP_E_ERRNO, "cannot make %s: %s", dir, strerror(errno));
		*p = c;
		if (c == '\0')
			return MP_OK;
	}
}
