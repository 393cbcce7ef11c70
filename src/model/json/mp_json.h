/* mp_json.h - memprof's JSON form of generic values (SCHEMA.md): read with cJSON, written directly. */
#ifndef MEMPROF_JSON_H
#define MEMPROF_JSON_H

#include <stddef.h>

#include "mp_err.h"
#include "mp_out.h"
#include "mp_value.h"

/* Deepest JSON nesting written or read: cJSON's CJSON_NESTING_LIMIT. */
#define MP_JSON_MAX_DEPTH 1000
/* Most decimal digits in an {"__int__": "..."} (Python's default int/str limit). */
#define MP_JSON_MAX_INT_DIGITS 4300
/* Most values in one JSON text written (some 20 GB): JSON has no sharing, so
   memo-shared containers are expanded, and a hostile pickle can nest sharing
   until the expansion is astronomic. */
#define MP_JSON_MAX_VALUES ((unsigned long long)1 << 30)

/* Parse the JSON in TEXT (LEN bytes, no NUL terminator needed) with cJSON and
   build its value in HEAP, undoing memprof's tags ({"__tuple__": [...]},
   {"__bytes__": "<base64>"}, {"__int__": "<decimal>"}, {"__float__": "nan"},
   {"__dict__": [[k, v], ...]}, {"__str__": "<base64>"}). A number that is
   integral and within +-2^53 becomes an int, any other number a float (cJSON
   keeps no trace of "1.0" versus "1"). A list under the key SKIP_KEY of a
   dict (MP_ABSENT: none) is parsed but not built, MP_SKIPPED in its place,
   as the pickle reader's skip keys do. The cJSON tree is freed as it is
   converted. Returns MP_OK and the frozen root in *ROOT, or with a one-line
   DIAG: MP_E_CORRUPT (syntax, invalid UTF-8, a malformed tag, an unhashable
   key), MP_E_LIMIT (nesting beyond MP_JSON_MAX_DEPTH, an over-long int),
   MP_E_TRUNCATED (no value at all), MP_E_NOMEM. On failure HEAP may hold
   unreachable values; the caller usually frees it. */
mp_err mp_json_read(mp_heap *heap, const char *text, size_t len, mp_val skip_key, mp_val *root,
		   mp_diag *diag) MP_WUR;

/* Append ROOT (a value of HEAP) to OUT as JSON in memprof's schema, tagging
   what JSON lacks so that mp_json_read gives back an equal value (floats that
   are integral come back as ints). The top-level dict has a key per line and
   top-level lists an item per line; deeper values stay on one line. Returns
   MP_OK, or with a one-line DIAG naming the place: MP_E_LIMIT (nesting beyond
   MP_JSON_MAX_DEPTH once tags are counted, or more than MP_JSON_MAX_VALUES
   values once shared containers are expanded: checked before anything is
   written), MP_E_RANGE (an int of more than
   MP_JSON_MAX_INT_DIGITS digits), MP_E_TYPE (a dict key holding a list or
   dict, MP_ABSENT inside ROOT),
   MP_E_NOMEM or OUT's sticky error. On failure OUT holds partial output. */
mp_err mp_json_write(const mp_heap *heap, mp_val root, mp_out *out, mp_diag *diag) MP_WUR;

/* Append the N bytes of S to OUT as a JSON string, quoted and escaped (for
   analyses that write JSON reports of their own). This function can't fail. */
void mp_json_put_string(mp_out *out, const char *s, size_t n);

#endif
