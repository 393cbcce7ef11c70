/* category_module.c - the Python module a source file is, for `categories --sites --by module`. */
#include <string.h>

#include "mp_category.h"

/* Where the last of "site-packages/" and "dist-packages/" in FILE ends, or NULL. */
static const char *after_packages(const char *file, size_t len)
{
	static const char *const dirs[] = { "site-packages/", "dist-packages/" };
	const char *best = NULL;

	for (size_t d = 0; d < 2; d++) {
		size_t m = strlen(dirs[d]);

		for (size_t i = len >= m ? len - m + 1 : 0; i-- > 0;)
			if (memcmp(file + i, dirs[d], m) == 0) {
				if (best == NULL || file + i + m > best)
					best = file + i + m;
				break;
			}
	}
	return best;
}

/* The start of the last '/'-separated component of [FILE, END). */
static const char *last_component(const char *file, const char *end)
{
	const char *p = end;

	while (p > file && p[-1] != '/')
		p--;
	return p;
}

static bool ends_with(const char *s, const char *end, const char *suffix)
{
	size_t m = strlen(suffix);

	return (size_t)(end - s) >= m && memcmp(end - m, suffix, m) == 0;
}

void mp_category_module_name(const char *file, size_t len, mp_out *out)
{
	const char *end = file + len, *start = after_packages(file, len);

	if (ends_with(file, end, ".py"))
		end -= 3;
	if (start == NULL) {
		start = last_component(file, end);
		/* Outside site-packages a package's __init__.py is named by its directory. */
		if (end - start == 8 && memcmp(start, "__init__", 8) == 0 && start > file)
			start = last_component(file, (end = start - 1));
	}
	/* A package's own module: "pkg/__init__" is "pkg". */
	if (ends_with(start, end, "/__init__"))
		end -= 9;
	if (start >= end) {
		mp_out_write(out, file, len); /* nothing left to name it by: the path as it is */
		return;
	}
	for (const char *p = start; p < end; p++)
		mp_out_putc(out, *p == '/' ? '.' : *p);
}
