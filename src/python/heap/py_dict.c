/* py_dict.c - dicts, item by item in insertion order: the keys table (3.10's and the 3.11-on format, str-only
   or general entries) and the values of split tables (three formats, py_heap_int.h). A table's sizes are
   checked against each other before anything is read by them, so a damaged dict gives an error, not a huge
   read. */
#include <stdlib.h>
#include <string.h>

#include "py_heap_int.h"

enum {
	CHUNK = 1024,      /* entries read at once */
	MAX_LOG2 = 27,     /* a hash table of 2^27 slots holds MP_PY_MAX_DICT * 4/3 entries */
	MAX_SHARED = 255,  /* the values of a split table are indexed by a byte */
};

/* What a dict's keys table says of itself. */
typedef struct keys_table {
	uint64_t addr;
	uint64_t nentries;     /* entries used so far, deleted ones included */
	uint64_t entries;      /* the first entry's address */
	unsigned entry_size;   /* 24: {hash, key, value}; 16: {key, value} (str-only tables, 3.11 on) */
	unsigned key_at, value_at;
} keys_table;

/* Index bytes per slot of a table of 2^LOG2 slots. */
static unsigned index_log2_bytes(unsigned log2)
{
	return log2 < 8 ? 0 : log2 < 16 ? 1 : log2 < 32 ? 2 : 3;
}

static mp_err read_keys(mp_py_heap *h, uint64_t addr, keys_table *k, mp_diag *diag)
{
	unsigned char head[40];
	uint64_t size, ib, nentries;
	unsigned log2 = 0;
	mp_err err;

	memset(k, 0, sizeof *k);
	k->addr = addr;
	if ((err = mp_target_read(h->t, addr, head, h->l.keys == PY_KEYS_310 ? 40 : 32, diag)) != MP_OK)
		return err;
	if (h->l.keys == PY_KEYS_310) {
		memcpy(&size, head + 8, 8);
		memcpy(&nentries, head + 32, 8);
		while (log2 <= MAX_LOG2 && ((uint64_t)1 << log2) < size)
			log2++;
		if (log2 > MAX_LOG2)
			return mp_fail(diag, MP_E_LIMIT, "dict keys at 0x%llx: a table of %llu slots, more than memprof reads",
				       (unsigned long long)addr, (unsigned long long)size);
		if (size == 0 || ((uint64_t)1 << log2) != size)
			return mp_fail(diag, MP_E_CORRUPT, "dict keys at 0x%llx: %llu slots, not a power of two",
				       (unsigned long long)addr, (unsigned long long)size);
		ib = (uint64_t)1 << index_log2_bytes(log2);
		k->entries = addr + 40 + size * ib;
		k->entry_size = 24;
	} else {
		log2 = head[8];
		memcpy(&nentries, head + 24, 8);
		if (log2 > MAX_LOG2)
			return mp_fail(diag, MP_E_LIMIT, "dict keys at 0x%llx: a table of 2^%u slots, more than memprof reads",
				       (unsigned long long)addr, log2);
		/* the shared empty table has one slot of 8 index bytes */
		if (head[9] < log2 + index_log2_bytes(log2) || head[9] > log2 + 3 || head[10] > 2)
			return mp_fail(diag, MP_E_CORRUPT, "dict keys at 0x%llx: index size 2^%u or kind %u do not fit 2^%u slots",
				       (unsigned long long)addr, head[9], head[10], log2);
		size = (uint64_t)1 << log2;
		k->entries = addr + 32 + ((uint64_t)1 << head[9]);
		k->entry_size = head[10] == 0 ? 24 : 16;
	}
	k->key_at = k->entry_size == 24 ? 8 : 0;
	k->value_at = k->key_at + 8;
	/* at most two thirds of the slots hold entries */
	if (nentries > size * 2 / 3)
		return mp_fail(diag, MP_E_CORRUPT, "dict keys at 0x%llx: %llu entries in %llu slots",
			       (unsigned long long)addr, (unsigned long long)nentries, (unsigned long long)size);
	if (nentries > MP_PY_MAX_DICT)
		return mp_fail(diag, MP_E_LIMIT, "dict keys at 0x%llx: %llu entries, more than memprof reads",
			       (unsigned long long)addr, (unsigned long long)nentries);
	k->nentries = nentries;
	return MP_OK;
}

/* The key of entry IX of K. */
static mp_err entry_key(mp_py_heap *h, const keys_table *k, uint64_t ix, uint64_t *key, mp_diag *diag)
{
	if (ix >= k->nentries)
		return mp_fail(diag, MP_E_CORRUPT, "dict keys at 0x%llx: entry %llu of %llu",
			       (unsigned long long)k->addr, (unsigned long long)ix, (unsigned long long)k->nentries);
	return mp_target_read_u64(h->t, k->entries + ix * k->entry_size + k->key_at, key, diag);
}

/* Call CB for each live entry of the combined table K, in order. */
static mp_err combined_each(mp_py_heap *h, const keys_table *k, bool (*cb)(void *ctx, uint64_t key, uint64_t value),
			    void *ctx, mp_diag *diag)
{
	uint64_t *buf = malloc((size_t)CHUNK * 24);
	size_t words = k->entry_size / 8;
	mp_err err = MP_OK;

	if (buf == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	for (uint64_t at = 0; at < k->nentries && err == MP_OK; at += CHUNK) {
		size_t n = (size_t)(k->nentries - at < CHUNK ? k->nentries - at : CHUNK);

		if ((err = mp_target_read(h->t, k->entries + at * k->entry_size, buf, n * k->entry_size, diag)) != MP_OK)
			break;
		for (size_t i = 0; i < n; i++) {
			uint64_t key = buf[i * words + k->key_at / 8], value = buf[i * words + k->value_at / 8];

			/* a deleted entry has no value (and 3.11 on no key) */
			if (key != 0 && value != 0 && !cb(ctx, key, value)) {
				free(buf);
				return MP_OK;
			}
		}
	}
	free(buf);
	return err;
}

/* 3.10: the values in the keys' order, a null one absent. */
static mp_err values_310(mp_py_heap *h, const keys_table *k, uint64_t values,
			 bool (*cb)(void *ctx, uint64_t key, uint64_t value), void *ctx, mp_diag *diag)
{
	for (uint64_t ix = 0; ix < k->nentries; ix++) {
		uint64_t key, value;
		mp_err err;

		if ((err = mp_target_read_u64(h->t, values + 8 * ix, &value, diag)) != MP_OK)
			return err;
		if (value == 0)
			continue;
		if ((err = entry_key(h, k, ix, &key, diag)) != MP_OK)
			return err;
		if (key != 0 && !cb(ctx, key, value))
			return MP_OK;
	}
	return MP_OK;
}

/* Call CB for the entries ORDER[0..N) names, with the values at VALUES (indexed by entry). */
static mp_err values_in_order(mp_py_heap *h, const keys_table *k, uint64_t values, const uint8_t *order, size_t n,
			      bool (*cb)(void *ctx, uint64_t key, uint64_t value), void *ctx, mp_diag *diag)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t key, value;
		mp_err err;

		if ((err = entry_key(h, k, order[i], &key, diag)) != MP_OK ||
		    (err = mp_target_read_u64(h->t, values + 8 * (uint64_t)order[i], &value, diag)) != MP_OK)
			return err;
		if (key != 0 && value != 0 && !cb(ctx, key, value))
			return MP_OK;
	}
	return MP_OK;
}

/* 3.11, 3.12: the byte before the values is the prefix's size, the one before it the count, and before that
   the entries' indices in insertion order, backwards. */
static mp_err values_311(mp_py_heap *h, const keys_table *k, uint64_t values,
			 bool (*cb)(void *ctx, uint64_t key, uint64_t value), void *ctx, mp_diag *diag)
{
	uint8_t pre[MAX_SHARED + 1], order[MAX_SHARED];
	uint8_t p, used;
	mp_err err;

	if ((err = mp_target_read_u8(h->t, values - 1, &p, diag)) != MP_OK)
		return err;
	if (p < 2 || (err = mp_target_read(h->t, values - p, pre, p, diag)) != MP_OK)
		return err != MP_OK ? err : mp_fail(diag, MP_E_CORRUPT, "dict values at 0x%llx: a prefix of %u bytes",
						    (unsigned long long)values, p);
	used = pre[p - 2];
	if (used + 2 > p)
		return mp_fail(diag, MP_E_CORRUPT, "dict values at 0x%llx: %u values in a prefix of %u bytes",
			       (unsigned long long)values, used, p);
	for (unsigned i = 0; i < used; i++)
		order[i] = pre[p - 3 - i];
	return values_in_order(h, k, values, order, used, cb, ctx, diag);
}

/* 3.13 on: {capacity, size, embedded, valid}, CAPACITY values, then SIZE indices in insertion order. */
static mp_err values_313(mp_py_heap *h, const keys_table *k, uint64_t values,
			 bool (*cb)(void *ctx, uint64_t key, uint64_t value), void *ctx, mp_diag *diag)
{
	uint8_t head[4], order[MAX_SHARED];
	mp_err err;

	if ((err = mp_target_read(h->t, values, head, sizeof head, diag)) != MP_OK)
		return err;
	if (head[1] > head[0])
		return mp_fail(diag, MP_E_CORRUPT, "dict values at 0x%llx: %u values, room for %u",
			       (unsigned long long)values, head[1], head[0]);
	if ((err = mp_target_read(h->t, values + 8 + 8 * (uint64_t)head[0], order, head[1], diag)) != MP_OK)
		return err;
	for (unsigned i = 0; i < head[1]; i++)
		if (order[i] >= head[0])
			return mp_fail(diag, MP_E_CORRUPT, "dict values at 0x%llx: index %u, room for %u",
				       (unsigned long long)values, order[i], head[0]);
	return values_in_order(h, k, values + 8, order, head[1], cb, ctx, diag);
}

mp_err py_heap_split_each(mp_py_heap *h, uint64_t keys, uint64_t values,
			  bool (*cb)(void *ctx, uint64_t key, uint64_t value), void *ctx, mp_diag *diag)
{
	keys_table k;
	mp_err err;

	if ((err = read_keys(h, keys, &k, diag)) != MP_OK)
		return err;
	switch (h->l.values) {
	case PY_VALUES_310:
		return values_310(h, &k, values, cb, ctx, diag);
	case PY_VALUES_311:
		return values_311(h, &k, values, cb, ctx, diag);
	default:
		return values_313(h, &k, values, cb, ctx, diag);
	}
}

mp_err mp_py_dict_each(mp_py_heap *h, uint64_t dict, bool (*cb)(void *ctx, uint64_t key, uint64_t value), void *ctx,
		       mp_diag *diag)
{
	uint64_t keys, values;
	keys_table k;
	mp_err err;

	if (!py_heap_is_kind(h, dict, h->syms.dict, MP_PY_TPFLAGS_DICT_SUBCLASS, NULL))
		return mp_fail(diag, MP_E_TYPE, "0x%llx is not a dict", (unsigned long long)dict);
	if ((err = mp_target_read_u64(h->t, dict + h->l.dict_keys, &keys, diag)) != MP_OK ||
	    (err = mp_target_read_u64(h->t, dict + h->l.dict_values, &values, diag)) != MP_OK)
		return err;
	if (values != 0)
		return py_heap_split_each(h, keys, values, cb, ctx, diag);
	if ((err = read_keys(h, keys, &k, diag)) != MP_OK)
		return err;
	return combined_each(h, &k, cb, ctx, diag);
}

/* mp_py_dict_get_str's search. */
typedef struct find_str {
	mp_py_heap *h;
	const char *key;
	uint64_t value;
	bool found;
} find_str;

static bool find_str_cb(void *ctx, uint64_t key, uint64_t value)
{
	find_str *f = ctx;

	if (!py_heap_str_equals(f->h, key, f->key))
		return true;
	f->value = value;
	f->found = true;
	return false;
}

mp_err mp_py_dict_get_str(mp_py_heap *h, uint64_t dict, const char *key, uint64_t *value, mp_diag *diag)
{
	find_str f = { h, key, 0, false };
	mp_err err;

	*value = 0;
	if ((err = mp_py_dict_each(h, dict, find_str_cb, &f, diag)) != MP_OK)
		return err;
	if (!f.found)
		return MP_E_NOTFOUND;
	*value = f.value;
	return MP_OK;
}
