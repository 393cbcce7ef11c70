/* mp_path.h - places inside a value, spelled as Python subscripts, for messages. */
#ifndef MEMPROF_PATH_H
#define MEMPROF_PATH_H

#include <stddef.h>

#include "mp_err.h"
#include "mp_value.h"

/* A place inside a value: ['segments'][3]['size']. Start with { .at = 0 }.
   These functions can't fail; a path that does not fit ends in "...". */
typedef struct mp_path {
	char s[256];
	size_t at;
} mp_path;

/* Append FMT's text to P. */
void mp_path_add(mp_path *p, const char *fmt, ...) MP_PRINTF(2, 3);

/* Append the dict key K of HEAP to P: ['name'] for a str (cut at 40 bytes),
   [key N] for any other key (N: the key's position in its dict). */
void mp_path_key(mp_path *p, const mp_heap *heap, mp_val k, size_t n);

/* P's text, or "the top level" when P is empty. */
const char *mp_path_str(mp_path *p);

#endif
