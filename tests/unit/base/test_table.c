/* test_table.c - mp_table, the one hash table: lookups, growth, collisions, removal, limits. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mp_table.h"
#include "unit_main.h"

/* A caller's entry, keyed by one 64-bit value, as the analyses keep theirs. */
struct entry {
	uint32_t value;
	uint64_t key;
};

static uint32_t find_key(const mp_table *t, const struct entry *e, uint64_t key, mp_table_probe *p)
{
	return mp_table_find_u64(t, key, e, sizeof *e, offsetof(struct entry, key), p);
}

/* Add KEY as entry *N of E (room for it), as interning does: look up, then add the new id. */
static void intern(mp_table *t, struct entry *e, uint32_t *n, uint64_t key)
{
	mp_table_probe p;

	CU_ASSERT_EQUAL_FATAL(find_key(t, e, key, &p), MP_TABLE_NONE);
	e[*n] = (struct entry){ *n * 3, key };
	CU_ASSERT_EQUAL_FATAL(mp_table_add(t, &p, *n), MP_OK);
	(*n)++;
}

/* Every id in the run of HASH, in probe order, into IDS (room for MAX); how many. */
static size_t ids_under(const mp_table *t, uint64_t hash, uint32_t *ids, size_t max)
{
	mp_table_probe p;
	size_t n = 0;

	for (uint32_t id = mp_table_find(t, hash, &p); id != MP_TABLE_NONE; id = mp_table_next(t, &p))
		if (n < max)
			ids[n++] = id;
	return n;
}

static void test_empty(void)
{
	mp_table t = { 0 };
	mp_table_probe p;

	CU_ASSERT_EQUAL(mp_table_find(&t, 12345, &p), MP_TABLE_NONE);
	CU_ASSERT_EQUAL(find_key(&t, NULL, 7, &p), MP_TABLE_NONE);
	CU_ASSERT_EQUAL(mp_table_count(&t), 0);
	CU_ASSERT_EQUAL(mp_table_bytes(&t), 0);
	mp_table_prefetch(&t, 99);
	mp_table_free(&t);
	CU_ASSERT_PTR_NULL(t.slots);
}

static void test_insert_find(void)
{
	enum { N = 100 };
	struct entry e[N];
	mp_table t = { 0 };
	mp_table_probe p;
	uint32_t n = 0;

	for (uint64_t k = 0; k < N; k++)
		intern(&t, e, &n, k * 1000003);
	CU_ASSERT_EQUAL(mp_table_count(&t), N);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t id = find_key(&t, e, (uint64_t)i * 1000003, &p);

		CU_ASSERT_EQUAL(id, i);
		if (id != MP_TABLE_NONE)
			CU_ASSERT_EQUAL(e[id].value, i * 3);
	}
	CU_ASSERT_EQUAL(find_key(&t, e, 1, &p), MP_TABLE_NONE);
	CU_ASSERT_EQUAL(find_key(&t, e, (uint64_t)N * 1000003, &p), MP_TABLE_NONE);
	mp_table_free(&t);
	CU_ASSERT_EQUAL(mp_table_count(&t), 0);
	CU_ASSERT_EQUAL(find_key(&t, e, 0, &p), MP_TABLE_NONE);
}

/* Through many doublings: ids never move (the caller's array order is insertion order, and the
   analyses iterate in it), the table stays at most half full and holds only slots. */
static void test_grow_keeps_ids(void)
{
	enum { N = 200000 };
	struct entry *e = malloc(N * sizeof *e);
	mp_table t = { 0 };
	mp_table_probe p;
	uint32_t n = 0;
	size_t grew = 0, last = 0;
	bool all = true;

	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	for (uint64_t k = 0; k < N; k++) {
		intern(&t, e, &n, k << 9); /* aligned, like block addresses */
		if (mp_table_bytes(&t) != last)
			grew++, last = mp_table_bytes(&t);
		CU_ASSERT_FATAL(2 * mp_table_count(&t) <= t.mask + 1);
	}
	CU_ASSERT(grew >= 10);
	CU_ASSERT_EQUAL(mp_table_bytes(&t), (t.mask + 1) * sizeof(uint64_t));
	CU_ASSERT(mp_table_bytes(&t) <= 4 * N * sizeof(uint64_t));
	for (uint32_t i = 0; i < N; i++)
		all &= find_key(&t, e, (uint64_t)i << 9, &p) == i;
	CU_ASSERT(all);
	mp_table_free(&t);
	free(e);
}

/* Ids under one hash: all offered, each once; other hashes that share the low bits (the slot)
   but not the 32 stored bits are never offered. */
static void test_collisions(void)
{
	enum { N = 3000 };
	static uint32_t ids[N + 1];
	static bool seen[N];
	mp_table t = { 0 };
	size_t n, once = 0;

	for (uint32_t i = 0; i < N; i++) {
		CU_ASSERT_EQUAL_FATAL(mp_table_insert(&t, 0xabc00000u, i), MP_OK);
		/* same slot in any table below 2^20 slots, other hash bits */
		CU_ASSERT_EQUAL_FATAL(mp_table_insert(&t, 0xabc00000u + ((uint64_t)(i + 1) << 20), N + i), MP_OK);
	}
	CU_ASSERT_EQUAL(mp_table_count(&t), 2 * N);
	n = ids_under(&t, 0xabc00000u, ids, N + 1);
	CU_ASSERT_EQUAL(n, N);
	for (size_t i = 0; i < n && ids[i] < N; i++)
		if (!seen[ids[i]])
			seen[ids[i]] = true, once++;
	CU_ASSERT_EQUAL(once, N);
	/* Only the low 32 bits of a hash count. */
	CU_ASSERT_EQUAL(ids_under(&t, 0xffffffff00000000ull | 0xabc00000u, ids, N + 1), N);
	CU_ASSERT_EQUAL(ids_under(&t, 0xabc00000u + ((uint64_t)5 << 20), ids, N + 1), 1);
	CU_ASSERT_EQUAL(ids[0], N + 4);
	CU_ASSERT_EQUAL(ids_under(&t, 0x12345678u, ids, N + 1), 0);
	mp_table_free(&t);
}

/* A reference for the removal test: which ids are in, by hash. */
struct ref {
	uint64_t hash[512];
	bool in[512];
};

/* Whether T holds exactly the ids R says, each under its hash. */
static bool matches(const mp_table *t, const struct ref *r)
{
	size_t count = 0;

	for (uint32_t id = 0; id < 512; id++) {
		uint32_t got[600];
		size_t n = ids_under(t, r->hash[id], got, 600), seen = 0;

		for (size_t k = 0; k < n; k++)
			seen += got[k] == id;
		if (seen != (r->in[id] ? 1u : 0u))
			return false;
		count += r->in[id];
	}
	return count == mp_table_count(t);
}

/* The slot that holds ID under HASH, as a probe for mp_table_remove. */
static bool probe_of(const mp_table *t, uint64_t hash, uint32_t id, mp_table_probe *p)
{
	for (uint32_t got = mp_table_find(t, hash, p); got != MP_TABLE_NONE; got = mp_table_next(t, p))
		if (got == id)
			return true;
	return false;
}

/* Adds and removes at random against the reference, with hashes crowded into the last and first
   slots of any table up to 2^16 slots, so that runs wrap around and removals shift across the
   wrap. */
static void test_remove(void)
{
	struct ref r = { { 0 }, { false } };
	mp_table t = { 0 };
	mp_table_probe p;
	uint64_t x = 88172645463325252ull;
	bool ok = true;

	for (uint32_t id = 0; id < 512; id++)
		r.hash[id] = (uint64_t)(id % 7) << 24 | (id % 12 < 8 ? 0xfff8 + id % 12 : id % 12 - 8);
	for (int step = 0; step < 20000 && ok; step++) {
		uint32_t id;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		id = (uint32_t)(x % 512);
		if (r.in[id]) {
			ok &= probe_of(&t, r.hash[id], id, &p);
			mp_table_remove(&t, &p);
			r.in[id] = false;
		} else {
			ok &= mp_table_insert(&t, r.hash[id], id) == MP_OK;
			r.in[id] = true;
		}
		if (step % 97 == 0)
			ok &= matches(&t, &r);
	}
	CU_ASSERT(ok);
	CU_ASSERT(matches(&t, &r));
	/* Remove everything: the table is empty but keeps its slots. */
	for (uint32_t id = 0; id < 512; id++)
		if (r.in[id] && probe_of(&t, r.hash[id], id, &p)) {
			mp_table_remove(&t, &p);
			r.in[id] = false;
		}
	CU_ASSERT_EQUAL(mp_table_count(&t), 0);
	CU_ASSERT(mp_table_bytes(&t) > 0);
	CU_ASSERT(matches(&t, &r));
	mp_table_free(&t);
}

static void test_limits(void)
{
	mp_table t = { 0 };
	mp_table_probe p;
	size_t saved;

	/* MP_TABLE_NONE is no id; the largest id below it is. */
	CU_ASSERT_EQUAL(mp_table_insert(&t, 1, MP_TABLE_NONE), MP_E_LIMIT);
	CU_ASSERT_EQUAL(mp_table_count(&t), 0);
	CU_ASSERT_EQUAL(mp_table_find(&t, 1, &p), MP_TABLE_NONE);
	CU_ASSERT_EQUAL(mp_table_insert(&t, 1, MP_TABLE_NONE - 1), MP_OK);
	CU_ASSERT_EQUAL(mp_table_find(&t, 1, &p), MP_TABLE_NONE - 1);
	/* ... also into a table with room (no growth on the way) */
	CU_ASSERT_EQUAL(mp_table_insert(&t, 3, MP_TABLE_NONE), MP_E_LIMIT);
	CU_ASSERT_EQUAL(mp_table_count(&t), 1);
	CU_ASSERT_EQUAL(mp_table_find(&t, 3, &p), MP_TABLE_NONE);
	/* A full table refuses one more and stays as it was. */
	saved = t.count;
	t.count = MP_TABLE_MAX_COUNT;
	CU_ASSERT_EQUAL(mp_table_insert(&t, 2, 5), MP_E_LIMIT);
	t.count = saved;
	CU_ASSERT_EQUAL(mp_table_find(&t, 2, &p), MP_TABLE_NONE);
	CU_ASSERT_EQUAL(mp_table_count(&t), 1);
	mp_table_free(&t);
}

/* Aligned addresses and heap handles differ only in their high bits: their hashes must not. */
static void test_hash_u64_spreads(void)
{
	bool seen[256] = { false };
	size_t distinct = 0;

	for (uint64_t k = 0; k < 1024; k++)
		seen[mp_table_hash_u64(0x7f0000000000ull + (k << 21)) & 255] = true;
	for (size_t i = 0; i < 256; i++)
		distinct += seen[i];
	CU_ASSERT(distinct > 200);
	CU_ASSERT_NOT_EQUAL(mp_table_hash_u64(0), mp_table_hash_u64(1));
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "empty table", test_empty },
		{ "insert and find", test_insert_find },
		{ "growth keeps ids (insertion order)", test_grow_keeps_ids },
		{ "many collisions", test_collisions },
		{ "removal against a reference", test_remove },
		{ "limits", test_limits },
		{ "hash of 64-bit keys spreads", test_hash_u64_spreads },
	};

	return UNIT_RUN("mp_table", tests, NULL, NULL);
}
