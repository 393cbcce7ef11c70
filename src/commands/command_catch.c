/* command_catch.c - the files of a caught CUDA OOM (mp_catch.h). */
#include <stdio.h>

#include "mp_catch.h"

static const char *const suffix[] = {
	[MP_CATCH_REPORT] = "txt", [MP_CATCH_SNAPSHOT] = "pickle", [MP_CATCH_PYSTACK] = "pystack.txt",
	[MP_CATCH_PAUSE] = "pause",
};

bool mp_catch_path(char *buf, size_t size, const char *dir, unsigned n, enum mp_catch_file f, bool json)
{
	int len = snprintf(buf, size, "%s/oom-%u.%s", dir, n, f == MP_CATCH_REPORT && json ? "json" : suffix[f]);

	return len >= 0 && (size_t)len < size;
}

void mp_catch_names(char *buf, size_t size, const char *dir, unsigned n, bool json)
{
	snprintf(buf, size, "%s/oom-%u.{%s,%s,%s}", dir, n, json ? "json" : suffix[MP_CATCH_REPORT],
		 suffix[MP_CATCH_SNAPSHOT], suffix[MP_CATCH_PYSTACK]);
}

bool mp_catch_write_pause(const char *dir, unsigned n, double seconds)
{
	char path[4200];
	FILE *f;

	if (!mp_catch_path(path, sizeof path, dir, n, MP_CATCH_PAUSE, false) || (f = fopen(path, "w")) == NULL)
		return false;
	fprintf(f, "%.3f\n", seconds);
	return fclose(f) == 0;
}
