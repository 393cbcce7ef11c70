/* mp_base64.h - base64 (RFC 4648, padded). */
#ifndef MEMPROF_BASE64_H
#define MEMPROF_BASE64_H

#include <stdbool.h>
#include <stddef.h>

#include "mp_out.h"

/* Append the padded base64 of B (N bytes) to OUT. Once OUT has failed (its sticky error) nothing is appended. */
void mp_base64_put(mp_out *out, const unsigned char *b, size_t n);

/* Decode the padded base64 S (N chars) into a malloc'd buffer, returned in *OUT (the caller frees it) with its
   length in *OUTLEN. Returns true, or false with *OUT untouched when S is not padded base64 or memory runs out. */
bool mp_base64_decode(const char *s, size_t n, unsigned char **out, size_t *outlen);

#endif
