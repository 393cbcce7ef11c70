/* mp_json_tags.c - memprof's JSON tags and the encodings inside them: decimal big ints (base64 is src/base's). */
#include "mp_json_int.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_json.h"

const char *const mp_json_tag_names[] = { "__tuple__", "__bytes__", "__int__",
					  "__float__", "__dict__",  "__str__" };

enum tag mp_json_tag_of(const char *s, size_t n)
{
	for (int t = 0; t < TAG_NONE; t++)
		if (strlen(mp_json_tag_names[t]) == n && memcmp(s, mp_json_tag_names[t], n) == 0)
			return (enum tag)t;
	return TAG_NONE;
}

/* Whether a heap str can be a plain JSON string: cJSON truncates at NUL and
   cannot read lone surrogates, so strings holding either go in __str__. */
bool mp_json_plain_str(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == 0 || (c == 0xed && i + 1 < n && (unsigned char)s[i + 1] >= 0xa0))
			return false;
	}
	return true;
}

/* ---- big ints in decimal */

/* The int in LE (N bytes of two's complement) in decimal, as a malloc'd
   string; NULL when out of memory. */
char *mp_json_int_to_decimal(const unsigned char *le, size_t n)
{
	bool neg = n > 0 && (le[n - 1] & 0x80);
	size_t nlimbs = n * 8 / 29 + 2, used = 0, at = 0;
	uint32_t *limb = calloc(nlimbs, sizeof *limb); /* base 1e9, low limb first */
	unsigned char *mag = malloc(n + 1);
	char *s = malloc(nlimbs * 9 + 2);
	unsigned carry = 1;

	if (limb == NULL || mag == NULL || s == NULL) {
		free(limb);
		free(mag);
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) { /* the magnitude: ~x + 1 when negative */
		unsigned x = neg ? (~le[i] & 0xffu) + carry : le[i];

		mag[i] = (unsigned char)x;
		carry = neg ? x >> 8 : 0;
	}
	for (size_t i = n; i-- > 0;) {
		uint64_t c = mag[i];

		for (size_t j = 0; j < used || c; j++) {
			uint64_t x = (j < used ? (uint64_t)limb[j] << 8 : 0) + c;

			limb[j] = (uint32_t)(x % 1000000000u);
			c = x / 1000000000u;
			if (j >= used)
				used = j + 1;
		}
	}
	if (neg)
		s[at++] = '-';
	at += (size_t)sprintf(s + at, "%u", used ? limb[used - 1] : 0u);
	for (size_t j = used > 0 ? used - 1 : 0; j-- > 0;)
		at += (size_t)sprintf(s + at, "%09u", limb[j]);
	free(limb);
	free(mag);
	return s;
}

/* Parse the decimal int S (N chars, optional '-') into HEAP. */
mp_err mp_json_decimal_to_int(mp_heap *heap, const char *s, size_t n, mp_val *out)
{
	bool neg = n > 0 && s[0] == '-';
	size_t ndig = n - neg, len = ndig * 10 / 24 + 2;
	unsigned char *le;
	mp_err err;

	if (ndig == 0 || ndig > MP_JSON_MAX_INT_DIGITS)
		return ndig == 0 ? MP_E_CORRUPT : MP_E_LIMIT;
	for (size_t i = neg; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return MP_E_CORRUPT;
	le = calloc(len, 1);
	if (le == NULL)
		return MP_E_NOMEM;
	for (size_t i = neg; i < n; i++) {
		unsigned carry = (unsigned)(s[i] - '0');

		for (size_t j = 0; j < len; j++) {
			unsigned x = le[j] * 10u + carry;

			le[j] = (unsigned char)x;
			carry = x >> 8;
		}
	}
	if (neg) { /* two's complement; the top byte stays clear, so the sign is right */
		unsigned carry = 1;

		for (size_t j = 0; j < len; j++) {
			unsigned x = (~le[j] & 0xffu) + carry;

			le[j] = (unsigned char)x;
			carry = x >> 8;
		}
	}
	err = mp_heap_int_le(heap, le, len, out);
	free(le);
	return err;
}
