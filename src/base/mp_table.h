/* mp_table.h - the one hash table of memprof: an open-addressing index from hashes to the
   caller's ids.

   The table holds no keys and no values, only (32 bits of hash, id) pairs: the entries stay in
   the caller's own array, and an id is an index into it. That one shape serves every use:
   interning (the id is the entry's number, handed out in insertion order), maps (the value
   sits in the caller's entry) and indexes over a subset of an array (a trie's wide nodes). It
   also means that
   - the table never decides an order: iterate over your array, in id order, which is the
     order in which you added them; ids never move when the table grows;
   - a lookup compares 32 hash bits first and touches an entry only when they match, and the
     table grows without reading a single entry (cache misses on entries dominate).

   Linear probing, at most half full, ids below 2^32 - 1, at most MP_TABLE_MAX_COUNT entries.
   A lookup is a probe: mp_table_find gives the first candidate id whose hash bits match,
   mp_table_next the following ones; the caller compares its own key and stops at the entry it
   wants or at MP_TABLE_NONE, where the probe then marks the free slot for mp_table_add. Keys that
   all share a hash cost a scan of every one of them per lookup, as with any unseeded hash: hash
   well (mp_hash.h; mp_table_hash_u64 for one 64-bit key).

   A zeroed mp_table is empty and ready; mp_table_free empties it again. Not thread-safe: one
   writer, or readers only. */
#ifndef MEMPROF_TABLE_H
#define MEMPROF_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mp_err.h"
#include "mp_hash.h"

/* "No such id": what a finished probe returns. Never a valid id. */
#define MP_TABLE_NONE UINT32_MAX
/* The most entries a table takes (its slots: twice as many, the most 32 hash bits can place). */
#define MP_TABLE_MAX_COUNT ((size_t)1 << 31)
/* The fewest slots a table that holds anything has. */
#define MP_TABLE_MIN_SLOTS ((size_t)256)

typedef struct mp_table {
	uint64_t *slots; /* 0: empty; else the hash bits << 32 | (id + 1). NULL while empty */
	size_t mask;     /* slots - 1 (0 while SLOTS is NULL) */
	size_t count;
} mp_table;

/* Where a lookup is: its hash bits and the slot it stopped at. */
typedef struct mp_table_probe {
	size_t pos;
	uint32_t hash;
} mp_table_probe;

/* Free what T holds; T is then empty (and may be used again). This function can't fail. */
void mp_table_free(mp_table *t);

/* The entries in T. This function can't fail. */
static inline size_t mp_table_count(const mp_table *t)
{
	return t->count;
}

/* The bytes T has allocated. This function can't fail. */
static inline size_t mp_table_bytes(const mp_table *t)
{
	return t->slots != NULL ? (t->mask + 1) * sizeof *t->slots : 0;
}

/* From P->pos on: the first id whose hash bits are P->hash, with P left on its slot, or
   MP_TABLE_NONE with P left on the free slot that ends the run. (Not for callers.) */
static inline uint32_t mp_table_scan_(const mp_table *t, mp_table_probe *p)
{
	for (;; p->pos = (p->pos + 1) & t->mask) {
		uint64_t s = t->slots[p->pos];

		if (s == 0)
			return MP_TABLE_NONE;
		if ((uint32_t)(s >> 32) == p->hash)
			return (uint32_t)s - 1;
	}
}

/* Start a lookup of HASH in T (only its low 32 bits count) into P: the first id added under
   a hash with the same bits, or MP_TABLE_NONE. This function can't fail. */
static inline uint32_t mp_table_find(const mp_table *t, uint64_t hash, mp_table_probe *p)
{
	p->hash = (uint32_t)hash;
	p->pos = p->hash & t->mask;
	return t->slots != NULL ? mp_table_scan_(t, p) : MP_TABLE_NONE;
}

/* The next candidate of the lookup P (which last returned an id), or MP_TABLE_NONE. This
   function can't fail. */
static inline uint32_t mp_table_next(const mp_table *t, mp_table_probe *p)
{
	p->pos = (p->pos + 1) & t->mask;
	return mp_table_scan_(t, p);
}

/* The slot of ID under hash bits HASH. (Not for callers.) */
static inline uint64_t mp_table_slot_(uint32_t hash, uint32_t id)
{
	return (uint64_t)hash << 32 | ((uint64_t)id + 1);
}

/* mp_table_add when T must grow first, or refuse. (Not for callers.) */
mp_err mp_table_add_slow_(mp_table *t, mp_table_probe *p, uint32_t id) MP_WUR;

/* Add ID under the hash of the lookup P, which has just returned MP_TABLE_NONE (nothing in T
   changed since): IDs are the caller's, each added once, and below MP_TABLE_NONE. P is spent.
   Returns MP_OK, MP_E_LIMIT (T holds MP_TABLE_MAX_COUNT entries, or ID is MP_TABLE_NONE) or
   MP_E_NOMEM; on an error T is as it was. Inline while T has room: interning a million values
   adds a million ids, and a call into the library for each shows. */
static inline mp_err mp_table_add(mp_table *t, mp_table_probe *p, uint32_t id)
{
	/* At most half full after the add: runs stay short. */
	if (t->slots == NULL || 2 * (t->count + 1) > t->mask + 1 || id == MP_TABLE_NONE)
		return mp_table_add_slow_(t, p, id);
	t->slots[p->pos] = mp_table_slot_(p->hash, id);
	t->count++;
	return MP_OK;
}

/* Add ID under HASH without looking for an entry equal to it: for an id known to be new. Returns
   what mp_table_add returns. */
mp_err mp_table_insert(mp_table *t, uint64_t hash, uint32_t id) MP_WUR;

/* Remove the id that the lookup P has just returned (nothing in T changed since); P is spent,
   the other ids stay. This function can't fail. */
void mp_table_remove(mp_table *t, const mp_table_probe *p);

/* Ask for the slot where a lookup of HASH starts, before the lookup: lookups of a batch of
   hashes then overlap their cache misses. This function can't fail. */
static inline void mp_table_prefetch(const mp_table *t, uint64_t hash)
{
#if defined(__GNUC__)
	if (t->slots != NULL)
		__builtin_prefetch(&t->slots[(uint32_t)hash & t->mask]);
#else
	(void)t, (void)hash;
#endif
}

/* The hash of a 64-bit key (a heap handle, an address): all its bits spread over the low
   ones, which aligned addresses and handles leave alike. This function can't fail. */
static inline uint64_t mp_table_hash_u64(uint64_t key)
{
	return mp_hash_finish(mp_hash_mix(0, key));
}

/* The id of KEY in a table of entries keyed by one 64-bit value, added under
   mp_table_hash_u64(key): entry ID is the STRIDE bytes at ENTRIES + ID * STRIDE and its key
   the 8 bytes at OFFSET in it. MP_TABLE_NONE when KEY is not there, with P ready for
   mp_table_add. This function can't fail. */
static inline uint32_t mp_table_find_u64(const mp_table *t, uint64_t key, const void *entries, size_t stride,
					 size_t offset, mp_table_probe *p)
{
	uint32_t id;

	for (id = mp_table_find(t, mp_table_hash_u64(key), p); id != MP_TABLE_NONE; id = mp_table_next(t, p)) {
		uint64_t k;

		memcpy(&k, (const char *)entries + (size_t)id * stride + offset, sizeof k);
		if (k == key)
			break;
	}
	return id;
}

#endif
