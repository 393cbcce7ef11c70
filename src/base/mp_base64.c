/* mp_base64.c - base64 (RFC 4648, padded): JSON's bytes and strings (src/model/json), the pages' embedded
   pickle (src/viz). */
#include "mp_base64.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void mp_base64_put(mp_out *out, const unsigned char *b, size_t n)
{
	char *p = mp_out_reserve(out, (n + 2) / 3 * 4);

	if (p == NULL)
		return;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t w = (uint32_t)b[i] << 16;

		if (i + 1 < n)
			w |= (uint32_t)b[i + 1] << 8;
		if (i + 2 < n)
			w |= b[i + 2];
		*p++ = b64_chars[w >> 18];
		*p++ = b64_chars[(w >> 12) & 63];
		*p++ = i + 1 < n ? b64_chars[(w >> 6) & 63] : '=';
		*p++ = i + 2 < n ? b64_chars[w & 63] : '=';
	}
	out->len += (n + 2) / 3 * 4;
}

static int b64_value(unsigned char c)
{
	const char *p = c ? strchr(b64_chars, c) : NULL;

	return p ? (int)(p - b64_chars) : -1;
}

bool mp_base64_decode(const char *s, size_t n, unsigned char **out, size_t *outlen)
{
	size_t pad = n >= 1 && s[n - 1] == '=' ? (n >= 2 && s[n - 2] == '=' ? 2 : 1) : 0;
	unsigned char *b;
	size_t o = 0;

	if (n % 4 != 0 || (b = malloc(n / 4 * 3 + 1)) == NULL)
		return false;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t w = 0;

		for (size_t j = 0; j < 4; j++) {
			int v = (i + j >= n - pad) ? 0 : b64_value((unsigned char)s[i + j]);

			if (v < 0) {
				free(b);
				return false;
			}
			w = (w << 6) | (uint32_t)v;
		}
		b[o++] = (unsigned char)(w >> 16);
		b[o++] = (unsigned char)(w >> 8);
		b[o++] = (unsigned char)w;
	}
	*out = b;
	*outlen = o - pad;
	return true;
}
