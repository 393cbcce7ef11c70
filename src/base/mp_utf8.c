/* mp_utf8.c - UTF-8 validation with an ASCII fast path. */
#include "mp_utf8.h"

#include <stdint.h>
#include <string.h>

/* Check the multi-byte sequence at S (LEFT bytes available); its length in *LEN. */
static bool sequence_valid(const unsigned char *s, size_t left, bool surrogates, size_t *len)
{
	unsigned char c = s[0];
	size_t k;
	uint32_t cp;

	if (c >= 0xc2 && c <= 0xdf)
		k = 1, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		k = 2, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 3, cp = c & 0x07;
	else
		return false;
	if (left <= k)
		return false;
	for (size_t j = 1; j <= k; j++) {
		if ((s[j] & 0xc0) != 0x80)
			return false;
		cp = (cp << 6) | (s[j] & 0x3f);
	}
	if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)))
		return false; /* overlong or beyond Unicode */
	if (!surrogates && cp >= 0xd800 && cp <= 0xdfff)
		return false;
	*len = k + 1;
	return true;
}

bool mp_utf8_valid(const unsigned char *s, size_t n, bool surrogates)
{
	size_t i = 0, len;
	uint64_t w;

	while (i < n) {
		/* Most text is ASCII: take eight bytes at a time while it is. */
		if (n - i >= 8 && (memcpy(&w, s + i, 8), (w & 0x8080808080808080ull) == 0)) {
			i += 8;
		} else if (s[i] < 0x80) {
			i++;
		} else if (sequence_valid(s + i, n - i, surrogates, &len)) {
			i += len;
		} else {
			return false;
		}
	}
	return true;
}
