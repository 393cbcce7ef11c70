/* mp_value_cont.c - containers of the value heap: built open, frozen, hash-consed. */
#include "mp_value.h"

#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_hash.h"
#include "mp_value_int.h"

/* ---- containers */

static struct cont *cont_of(const mp_heap *heap, mp_val v)
{
	size_t i = handle_index(v);

	if (!mp_val_is_container(v) || i >= heap->nconts)
		return NULL;
	return &heap->conts[i];
}

static size_t handles_per_item(uint8_t type)
{
	return type == MP_T_DICT ? 2 : 1;
}

static uint64_t cont_hash(uint8_t type, const mp_val *items, size_t nhandles)
{
	uint64_t h = type;

	for (size_t i = 0; i < nhandles; i++)
		h = mp_hash_mix(h, items[i]);
	return mp_hash_finish(h);
}

static mp_err new_cont(mp_heap *heap, uint8_t type, size_t *index)
{
	mp_err err;

	if (heap->free_conts != 0) {
		*index = heap->free_conts - 1;
		heap->free_conts = heap->conts[*index].u.next_free;
	} else {
		if (heap->nconts >= MAX_INDEX)
			return MP_E_LIMIT;
		err = mp_array_grow((void **)&heap->conts, &heap->conts_cap, heap->nconts + 1,
			   sizeof *heap->conts);
		if (err != MP_OK)
			return err;
		*index = heap->nconts++;
	}
	memset(&heap->conts[*index], 0, sizeof heap->conts[*index]);
	heap->conts[*index].type = type;
	return MP_OK;
}

mp_err mp_heap_open(mp_heap *heap, enum mp_vtype type, mp_val *out)
{
	size_t index, slot;
	mp_err err;

	if (type != MP_T_LIST && type != MP_T_TUPLE && type != MP_T_DICT)
		return MP_E_TYPE;
	if (heap->nfree_open > 0) {
		slot = heap->free_open[--heap->nfree_open];
	} else {
		err = mp_array_grow((void **)&heap->free_open, &heap->free_open_cap, heap->nopen + 1,
			   sizeof *heap->free_open);
		if (err != MP_OK)
			return err;
		err = mp_array_grow((void **)&heap->open, &heap->open_cap, heap->nopen + 1, sizeof *heap->open);
		if (err != MP_OK)
			return err;
		slot = heap->nopen++;
		memset(&heap->open[slot], 0, sizeof heap->open[slot]);
	}
	err = new_cont(heap, (uint8_t)type, &index);
	if (err != MP_OK) {
		heap->free_open[heap->nfree_open++] = (uint32_t)slot;
		return err;
	}
	heap->conts[index].state = CONT_OPEN;
	heap->conts[index].u.open = (uint32_t)slot;
	heap->open[slot].n = 0;
	*out = make_handle(index, type);
	return MP_OK;
}

bool mp_heap_cont_is_open(const mp_heap *heap, mp_val cont)
{
	const struct cont *c = cont_of(heap, cont);

	return c != NULL && c->state == CONT_OPEN;
}

static mp_err open_push(mp_heap *heap, struct cont *c, const mp_val *h, size_t nh)
{
	struct open_items *o = &heap->open[c->u.open];
	mp_err err;

	if (c->n >= MAX_INDEX)
		return MP_E_LIMIT;
	err = mp_array_grow((void **)&o->items, &o->cap, o->n + nh, sizeof(mp_val));
	if (err != MP_OK)
		return err;
	memcpy(o->items + o->n, h, nh * sizeof(mp_val));
	o->n += nh;
	c->n++;
	return MP_OK;
}

mp_err mp_heap_append(mp_heap *heap, mp_val cont, mp_val item)
{
	struct cont *c = cont_of(heap, cont);

	if (c == NULL || c->type == MP_T_DICT)
		return MP_E_TYPE;
	if (c->state != CONT_OPEN || mp_heap_is_open(heap, item))
		return MP_E_UNSUPPORTED;
	return open_push(heap, c, &item, 1);
}

mp_err mp_heap_setitem(mp_heap *heap, mp_val dict, mp_val key, mp_val value)
{
	struct cont *c = cont_of(heap, dict);
	mp_val pair[2] = { key, value };

	if (c == NULL || c->type != MP_T_DICT)
		return MP_E_TYPE;
	if (c->state != CONT_OPEN || mp_heap_is_open(heap, key) || mp_heap_is_open(heap, value))
		return MP_E_UNSUPPORTED;
	return open_push(heap, c, pair, 2);
}

static int cmp_key_pos(const void *a, const void *b, void *items_)
{
	const mp_val *items = items_;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (items[2 * i] != items[2 * j])
		return items[2 * i] < items[2 * j] ? -1 : 1;
	return i < j ? -1 : (i > j);
}

/* Python dict semantics for repeated keys: the first position wins, the last
   value wins. Keys compare by handle (exact for interned strs and small ints). */
static mp_err dedupe_dict(mp_val *items, size_t *npairs)
{
	size_t n = *npairs, out = 0;
	uint32_t *pos;
	bool *dead;

	if (n < 2)
		return MP_OK;
	pos = malloc(n * sizeof *pos);
	dead = calloc(n, sizeof *dead);
	if (pos == NULL || dead == NULL) {
		free(pos);
		free(dead);
		return MP_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		pos[i] = (uint32_t)i;
	qsort_r(pos, n, sizeof *pos, cmp_key_pos, items);
	for (size_t i = 1, first = 0; i < n; i++) {
		if (items[2 * pos[i]] != items[2 * pos[first]]) {
			first = i;
			continue;
		}
		/* pos[i] repeats the key first seen at pos[first]: move its value there. */
		items[2 * pos[first] + 1] = items[2 * pos[i] + 1];
		dead[pos[i]] = true;
	}
	for (size_t i = 0; i < n; i++) {
		if (dead[i])
			continue;
		items[2 * out] = items[2 * i];
		items[2 * out + 1] = items[2 * i + 1];
		out++;
	}
	*npairs = out;
	free(pos);
	free(dead);
	return MP_OK;
}

static bool dict_has_repeats(const mp_val *items, size_t npairs)
{
	if (npairs > 16)
		return true; /* let the sort-based pass decide */
	for (size_t i = 1; i < npairs; i++)
		for (size_t j = 0; j < i; j++)
			if (items[2 * i] == items[2 * j])
				return true;
	return false;
}

/* The id of a frozen container equal to TYPE/ITEMS (NH handles, at most HASHCONS_MAX_ITEMS), or
   SIZE_MAX with *P ready to add this one. */
static size_t hashcons_find(const mp_heap *heap, uint8_t type, const mp_val *items, size_t nh, mp_table_probe *p)
{
	const mp_table *t = &heap->cont_index;

	for (uint32_t id = mp_table_find(t, cont_hash(type, items, nh), p); id != MP_TABLE_NONE;
	     id = mp_table_next(t, p)) {
		const struct cont *o = &heap->conts[id];

		if (o->type == type && o->n * handles_per_item(type) == nh &&
		    (nh == 0 || memcmp(o->d.items, items, nh * sizeof(mp_val)) == 0))
			return id;
	}
	return SIZE_MAX;
}

static void close_open_slot(mp_heap *heap, struct cont *c)
{
	struct open_items *o = &heap->open[c->u.open];

	/* Keep the vector for the next container unless it grew large. */
	if (o->cap > 4096) {
		free(o->items);
		o->items = NULL;
		o->cap = 0;
	}
	o->n = 0;
	heap->free_open[heap->nfree_open++] = c->u.open;
}

mp_err mp_heap_freeze(mp_heap *heap, mp_val cont, mp_val *out)
{
	struct cont *c = cont_of(heap, cont);
	struct open_items *o;
	mp_val *items;
	size_t npairs, nh, found = SIZE_MAX;
	mp_table_probe p;
	bool hashcons;
	mp_err err;

	if (c == NULL)
		return MP_E_TYPE;
	if (c->state != CONT_OPEN) {
		*out = mp_heap_resolve(heap, cont);
		return MP_OK;
	}
	o = &heap->open[c->u.open];
	npairs = c->n;
	if (c->type == MP_T_DICT && dict_has_repeats(o->items, npairs)) {
		err = dedupe_dict(o->items, &npairs);
		if (err != MP_OK)
			return err;
	}
	nh = npairs * handles_per_item(c->type);
	/* Large containers are not looked up. */
	hashcons = nh <= HASHCONS_MAX_ITEMS;
	if (hashcons)
		found = hashcons_find(heap, c->type, o->items, nh, &p);
	if (found != SIZE_MAX) {
		close_open_slot(heap, c);
		c->state = CONT_ALIAS;
		c->d.canon = make_handle(found, c->type);
		*out = c->d.canon;
		return MP_OK;
	}
	items = mp_value_arena_alloc(&heap->bytes, nh ? nh * sizeof(mp_val) : 1, sizeof(mp_val));
	if (items == NULL)
		return MP_E_NOMEM;
	/* Indexed before it is frozen: a failure leaves it open, as it was. */
	if (hashcons && (err = mp_table_add(&heap->cont_index, &p, (uint32_t)handle_index(cont))) != MP_OK)
		return err;
	if (nh > 0)
		memcpy(items, o->items, nh * sizeof(mp_val));
	close_open_slot(heap, c);
	c->n = (uint32_t)npairs;
	c->state = CONT_FROZEN;
	c->d.items = items;
	*out = mp_heap_resolve(heap, cont);
	return MP_OK;
}

void mp_heap_release(mp_heap *heap, mp_val cont)
{
	struct cont *c = cont_of(heap, cont);

	if (c == NULL || c->state != CONT_ALIAS)
		return;
	c->state = CONT_FREE;
	c->u.next_free = heap->free_conts;
	heap->free_conts = (uint32_t)handle_index(cont) + 1;
}

/* Build a frozen container straight from its handles, without an open record:
   the equal one when it exists, else a new one (small containers with no
   repeated key only; the caller ensures none is open). */
static mp_err make_small(mp_heap *heap, uint8_t type, const mp_val *items, size_t n, mp_val *out)
{
	size_t nh = n * handles_per_item(type), index;
	mp_table_probe p;
	mp_val *copy;
	size_t found = hashcons_find(heap, type, items, nh, &p);
	mp_err err;

	if (found != SIZE_MAX) {
		*out = make_handle(found, type);
		return MP_OK;
	}
	copy = mp_value_arena_alloc(&heap->bytes, nh ? nh * sizeof(mp_val) : 1, sizeof(mp_val));
	if (copy == NULL)
		return MP_E_NOMEM;
	if ((err = new_cont(heap, type, &index)) != MP_OK)
		return err;
	if ((err = mp_table_add(&heap->cont_index, &p, (uint32_t)index)) != MP_OK) {
		heap->conts[index].state = CONT_FREE;
		heap->conts[index].u.next_free = heap->free_conts;
		heap->free_conts = (uint32_t)index + 1;
		return err;
	}
	if (nh > 0)
		memcpy(copy, items, nh * sizeof(mp_val));
	heap->conts[index].n = (uint32_t)n;
	heap->conts[index].state = CONT_FROZEN;
	heap->conts[index].d.items = copy;
	*out = make_handle(index, type);
	return MP_OK;
}

mp_err mp_heap_make(mp_heap *heap, enum mp_vtype type, const mp_val *items, size_t n, mp_val *out)
{
	mp_val cont;
	mp_err err;

	if (type != MP_T_LIST && type != MP_T_TUPLE && type != MP_T_DICT)
		return MP_E_TYPE;
	if (n * handles_per_item((uint8_t)type) <= HASHCONS_MAX_ITEMS &&
	    (type != MP_T_DICT || !dict_has_repeats(items, n))) {
		for (size_t i = 0; i < n * handles_per_item((uint8_t)type); i++)
			if (mp_heap_is_open(heap, items[i]))
				return MP_E_UNSUPPORTED;
		return make_small(heap, (uint8_t)type, items, n, out);
	}
	err = mp_heap_open(heap, type, &cont);
	for (size_t i = 0; err == MP_OK && i < n; i++) {
		if (type == MP_T_DICT)
			err = mp_heap_setitem(heap, cont, items[2 * i], items[2 * i + 1]);
		else
			err = mp_heap_append(heap, cont, items[i]);
	}
	if (err == MP_OK)
		err = mp_heap_freeze(heap, cont, out);
	if (err == MP_OK && *out != cont)
		mp_heap_release(heap, cont);
	return err;
}

mp_val mp_heap_cont_resolve(const mp_heap *heap, mp_val v)
{
	const struct cont *c = cont_of(heap, v);

	if (c != NULL && c->state == CONT_ALIAS)
		return c->d.canon;
	return v;
}

size_t mp_heap_len(const mp_heap *heap, mp_val v)
{
	const struct cont *c = cont_of(heap, mp_heap_resolve(heap, v));

	return c == NULL ? 0 : c->n;
}

const mp_val *mp_heap_items(const mp_heap *heap, mp_val v)
{
	const struct cont *c = cont_of(heap, mp_heap_resolve(heap, v));

	if (c == NULL)
		return NULL;
	if (c->state == CONT_OPEN)
		return heap->open[c->u.open].items;
	return c->d.items;
}

mp_val mp_heap_dict_get(const mp_heap *heap, mp_val dict, mp_val key)
{
	const mp_val *items;
	size_t n;

	if (mp_val_type(dict) != MP_T_DICT)
		return MP_ABSENT;
	items = mp_heap_items(heap, dict);
	n = mp_heap_len(heap, dict);
	for (size_t i = 0; i < n; i++)
		if (items[2 * i] == key)
			return items[2 * i + 1];
	return MP_ABSENT;
}
