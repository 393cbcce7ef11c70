/* mp_file.c - write a result file whole or not at all. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mp_file.h"

mp_err mp_file_write(const char *path, const void *data, size_t len, mp_diag *diag)
{
	char tmp[4096];
	FILE *f;
	int saved;

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
