/* mp_hash.c - word-at-a-time hashing of byte strings. */
#include "mp_hash.h"

#include <string.h>

uint64_t mp_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (len * 0x87c37b91114253d5ull);
	uint64_t word;

	while (len >= 8) {
		memcpy(&word, p, 8);
		h = mp_hash_mix(h, word);
		p += 8;
		len -= 8;
	}
	if (len > 0) {
		word = 0;
		memcpy(&word, p, len);
		h = mp_hash_mix(h, word ^ ((uint64_t)len << 56));
	}
	return mp_hash_finish(h);
}
