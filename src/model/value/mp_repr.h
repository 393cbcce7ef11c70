/* mp_repr.h - Python 3's repr() of generic values, byte for byte. */
#ifndef MEMPROF_REPR_H
#define MEMPROF_REPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_out.h"
#include "mp_value.h"

/* Write repr(V) as Python 3 does: dicts in stored order, tuples as (x,),
   str and bytes with Python's quoting and escapes, ints of any size, floats
   as the shortest round-tripping text, True/False/None.
   Where Python would raise, a stand-in is written instead: "..." for
   containers nested deeper than 1000 levels, for ints of more than 4300
   digits (Python's default int_max_str_digits) and for any part past a budget of
   2**24 values per call (a shared sub-list can make the text exponential).
   MP_ABSENT writes "<absent>". This function can't fail (OUT's error is sticky). */
void mp_repr(const mp_heap *heap, mp_val v, mp_out *out);

/* Python's repr(float) of D, e.g. "1.0", "1e+16", "-0.0", "nan", "inf". */
void mp_repr_float(mp_out *out, double d);

/* Python's repr(str) of the text S (UTF-8; encoded surrogates allowed, and an
   invalid byte is taken as the lone surrogate U+DC80..U+DCFF, as Python's
   'surrogateescape' would read it). */
void mp_repr_str(mp_out *out, const char *s, size_t len);

/* Python's repr(bytes) of LEN bytes at B, e.g. b'a\x00'. */
void mp_repr_bytes(mp_out *out, const void *b, size_t len);

/* Whether Python's str.isprintable() holds for code point CP (Unicode 14.0,
   the table of Python 3.11). */
bool mp_repr_isprintable(uint32_t cp);

#endif
