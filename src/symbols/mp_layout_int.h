/* mp_layout_int.h - what the layout sources share and memprof does not export. */
#ifndef MEMPROF_LAYOUT_INT_H
#define MEMPROF_LAYOUT_INT_H

#include <stddef.h>

#include "mp_layout.h"

/* One layout file compiled in: its base name and text (mp_layout_builtin.c, generated at build
   time from src/symbols/layouts/ *.layout by src/symbols/local.am). */
struct mp_layout_builtin_file {
	const char *name;
	const char *text;
};

extern const struct mp_layout_builtin_file mp_layout_builtin_files[];
extern const size_t mp_layout_builtin_nfiles;

/* The field whose struct is S (SLEN bytes) and member M (MLEN bytes), or -1. */
int mp_layout_field_lookup(const char *s, size_t slen, const char *m, size_t mlen);

#endif
