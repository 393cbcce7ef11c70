/* mp_utf8.h - UTF-8 validation as CPython's decoders apply it. */
#ifndef MEMPROF_UTF8_H
#define MEMPROF_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Whether S (N bytes) is well-formed UTF-8. Encoded surrogates (what CPython's
   'surrogatepass' error handler reads and writes, as pickle does) pass only
   when SURROGATES is true. This function can't fail. */
bool mp_utf8_valid(const unsigned char *s, size_t n, bool surrogates);

#endif
