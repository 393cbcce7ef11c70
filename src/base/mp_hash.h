/* mp_hash.h - a fast non-cryptographic 64-bit hash for interning. */
#ifndef MEMPROF_HASH_H
#define MEMPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Hash LEN bytes at DATA, mixed with SEED. This function can't fail. */
uint64_t mp_hash_bytes(const void *data, size_t len, uint64_t seed);

/* Mix one 64-bit word into a running hash H. */
static inline uint64_t mp_hash_mix(uint64_t h, uint64_t word)
{
	h ^= word * 0x9e3779b97f4a7c15ull;
	h = (h << 27) | (h >> 37);
	return h * 0xff51afd7ed558ccdull + 0x632be59bd9b4e019ull;
}

/* Spread the bits of H so that its low bits make a good table index. */
static inline uint64_t mp_hash_finish(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return h;
}

#endif
