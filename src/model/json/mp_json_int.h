/* mp_json_int.h - memprof's JSON tags and their encodings, shared by the JSON writer and reader
   (private to src/model). */
#ifndef MEMPROF_JSON_INT_H
#define MEMPROF_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_out.h"
#include "mp_value.h"

/* The tags, as object keys. A real dict whose only key is one of them is
   written in the __dict__ form so that it cannot be mistaken for a tag. */
enum tag { TAG_TUPLE, TAG_BYTES, TAG_INT, TAG_FLOAT, TAG_DICT, TAG_STR, TAG_NONE };

/* Integers beyond 2^53 lose precision in a double, the type cJSON keeps. */
#define EXACT_INT_MAX ((int64_t)1 << 53)

/* The key of each tag (TAG_NONE excluded), indexed by enum tag. */
extern const char *const mp_json_tag_names[];

/* The tag whose key is S (N bytes, no NUL needed), or TAG_NONE when S names
   none. This function can't fail. */
enum tag mp_json_tag_of(const char *s, size_t n);

/* Whether the heap str S (N bytes) can be written as a plain JSON string:
   false when it holds a NUL or a lone surrogate, which cJSON cannot read back,
   so that it goes in __str__. This function can't fail. */
bool mp_json_plain_str(const char *s, size_t n);

/* The int in LE (N bytes of two's complement, low byte first) in decimal, as
   a malloc'd NUL-terminated string the caller frees; NULL when out of memory. */
char *mp_json_int_to_decimal(const unsigned char *le, size_t n);

/* Parse the decimal int S (N chars, an optional leading '-') into HEAP,
   giving its value in *OUT. Returns MP_OK, MP_E_CORRUPT (no digits, or a
   non-digit), MP_E_LIMIT (more than MP_JSON_MAX_INT_DIGITS digits) or an
   error of mp_heap_int_le (MP_E_NOMEM). Sets no diagnostic. */
mp_err mp_json_decimal_to_int(mp_heap *heap, const char *s, size_t n, mp_val *out) MP_WUR;

/* ---- Reading, shared by the whole-text reader (mp_json_read.c) and the
   snapshot stream reader (mp_json_stream.c), which hands cJSON one value at a
   time. */

struct cJSON;

/* JSON's whitespace (what memprof allows around and between values). */
static inline bool mp_json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Where the value in TEXT (LEN bytes) starts: past a UTF-8 byte order mark
   and whitespace (LEN when there is nothing else). This function can't fail. */
size_t mp_json_value_start(const char *text, size_t len);

/* Refuse (MP_E_CORRUPT, with DIAG) a raw NUL byte or a \u0000 escape in the LEN
   bytes at TEXT, which start outside any string: cJSON would cut the string. */
mp_err mp_json_check_nul(const char *text, size_t len, mp_diag *diag) MP_WUR;

/* Turns cJSON trees into values of a heap, tags undone (mp_json_read's rules). */
typedef struct mp_json_conv mp_json_conv;

/* A converter into HEAP whose errors go to DIAG, passing over the lists
   under SKIP_KEY (as mp_json_read does). Returns NULL when out of memory. */
mp_json_conv *mp_json_conv_new(mp_heap *heap, mp_val skip_key, mp_diag *diag);

/* Free C (NULL allowed). */
void mp_json_conv_free(mp_json_conv *c);

/* Convert NODE, the value under KEY of a dict (detached from any parent and
   freed here whatever happens), into a frozen value in *OUT, or MP_SKIPPED
   for a list under the skip key. Errors as mp_json_read's, the place in the
   message counted from NODE. */
mp_err mp_json_conv_member(mp_json_conv *c, mp_val key, struct cJSON *node, mp_val *out) MP_WUR;

/* The str of a dict key S (as cJSON keeps it: NUL-terminated) in *OUT;
   MP_E_CORRUPT when it is not valid UTF-8. */
mp_err mp_json_conv_key(mp_json_conv *c, const char *s, mp_val *out) MP_WUR;

#endif
