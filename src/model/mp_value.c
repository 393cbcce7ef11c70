/* mp_value.c - the value heap: interned atoms, open and frozen containers, hash-consing. */
#include "mp_value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mp_hash.h"

/* Indexes are stored in 60-bit payloads but kept below 2^31 so that 32-bit
   tables suffice; inputs that would need more are refused (MP_E_LIMIT). */
#define MAX_INDEX ((1u << 31) - 1)
/* Containers with at most this many handles are hash-consed when frozen: that
   covers frame dicts and small tuples, the values that real snapshots repeat as
   distinct objects. Larger containers that repeat are shared by the pickle memo. */
#define HASHCONS_MAX_ITEMS 8
#define CHUNK_SIZE ((size_t)1 << 20)

enum cont_state { CONT_FREE = 0, CONT_OPEN, CONT_FROZEN, CONT_ALIAS };

struct atom {
	const char *data;
	uint32_t len;
	uint32_t hash;
	uint8_t type;
};

struct cont {
	uint32_t n;     /* items (dict: pairs) */
	uint8_t type;
	uint8_t state;
	union {
		uint32_t open;      /* CONT_OPEN: index into heap->open */
		uint32_t next_free; /* CONT_FREE: free-list link */
	} u;
	union {
		const mp_val *items; /* CONT_FROZEN */
		mp_val canon;        /* CONT_ALIAS */
	} d;
};

struct open_items {
	mp_val *items;
	size_t n;   /* handles in use (a dict uses two per pair) */
	size_t cap;
};

/* A chunked bump allocator: blocks never move, so pointers into them stay valid. */
struct arena {
	char **chunks;
	size_t nchunks;
	size_t used; /* in the last chunk */
	size_t cap;  /* of the last chunk */
	size_t total;
};

/* Open addressing table of ids. A slot holds the id + 1 in its low 32 bits
   (0 = empty) and the entry's 32-bit hash in its high bits, so that probing
   and growing never touch the entries themselves (cache misses dominate). */
struct idtable {
	uint64_t *slots;
	size_t mask;
	size_t count;
};

#define SLOT(hash, id) (((uint64_t)(uint32_t)(hash) << 32) | ((uint64_t)(id) + 1))
#define SLOT_ID(slot) ((uint32_t)(slot) - 1)
#define SLOT_HASH(slot) ((uint32_t)((slot) >> 32))

struct mp_heap {
	struct arena bytes; /* atom bytes and frozen items */
	struct atom *atoms;
	size_t natoms, atoms_cap;
	struct idtable atom_index;
	double *floats;
	size_t nfloats, floats_cap;
	struct cont *conts;
	size_t nconts, conts_cap;
	uint32_t free_conts; /* head of the CONT_FREE list, +1; 0 = empty */
	struct open_items *open;
	size_t nopen, open_cap;
	uint32_t *free_open; /* stack of reusable slots in open[] */
	size_t nfree_open, free_open_cap;
	struct idtable cont_index;
	mp_keys keys;
};

static mp_val make_handle(size_t index, enum mp_vtype type)
{
	return ((mp_val)index << 4) | type;
}

static size_t handle_index(mp_val v)
{
	return (size_t)(v >> 4);
}

/* ---- growth helpers */

static mp_err grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return MP_OK;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return MP_E_NOMEM;
		ncap *= 2;
	}
	np = realloc(*p, ncap * elem);
	if (np == NULL)
		return MP_E_NOMEM;
	*p = np;
	*cap = ncap;
	return MP_OK;
}

static void *arena_alloc(struct arena *a, size_t size, size_t align)
{
	size_t at = (a->used + align - 1) & ~(align - 1);
	char **chunks;
	char *chunk;
	size_t csize;

	if (a->nchunks > 0 && size <= a->cap && at <= a->cap - size) {
		a->used = at + size;
		return a->chunks[a->nchunks - 1] + at;
	}
	csize = size > CHUNK_SIZE / 4 ? size : CHUNK_SIZE;
	chunks = realloc(a->chunks, (a->nchunks + 1) * sizeof *chunks);
	if (chunks == NULL)
		return NULL;
	a->chunks = chunks;
	chunk = malloc(csize ? csize : 1);
	if (chunk == NULL)
		return NULL;
	a->total += csize;
	if (csize > CHUNK_SIZE && a->nchunks > 0) {
		/* An oversized block gets its own chunk, slotted in before the
		   current one so the current one keeps taking small requests. */
		a->chunks[a->nchunks] = a->chunks[a->nchunks - 1];
		a->chunks[a->nchunks - 1] = chunk;
		a->nchunks++;
		return chunk;
	}
	a->chunks[a->nchunks++] = chunk;
	a->used = size;
	a->cap = csize;
	return chunk;
}

static void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->nchunks; i++)
		free(a->chunks[i]);
	free(a->chunks);
	memset(a, 0, sizeof *a);
}

/* ---- id tables */

static mp_err idtable_grow(struct idtable *t)
{
	size_t nsize = t->slots ? (t->mask + 1) * 2 : 1024;
	uint64_t *ns = calloc(nsize, sizeof *ns);

	if (ns == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; t->slots && i <= t->mask; i++) {
		size_t j;

		if (t->slots[i] == 0)
			continue;
		j = SLOT_HASH(t->slots[i]) & (nsize - 1);
		while (ns[j] != 0)
			j = (j + 1) & (nsize - 1);
		ns[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = ns;
	t->mask = nsize - 1;
	return MP_OK;
}

/* Make room for one more entry. */
static mp_err idtable_reserve(struct idtable *t)
{
	if (t->slots == NULL || t->count * 2 >= t->mask + 1)
		return idtable_grow(t);
	return MP_OK;
}

/* ---- atoms */

static mp_err intern_atom(mp_heap *heap, enum mp_vtype type, const void *data, size_t len,
			  mp_val *out)
{
	uint32_t hash = (uint32_t)mp_hash_bytes(data, len, type);
	struct idtable *t = &heap->atom_index;
	struct atom *a;
	char *copy;
	size_t j;
	mp_err err;

	if (len > UINT32_MAX - 1)
		return MP_E_LIMIT;
	err = idtable_reserve(t);
	if (err != MP_OK)
		return err;
	for (j = hash & t->mask; t->slots[j] != 0; j = (j + 1) & t->mask) {
		if (SLOT_HASH(t->slots[j]) != hash)
			continue;
		a = &heap->atoms[SLOT_ID(t->slots[j])];
		if (a->type == type && a->len == len && memcmp(a->data, data, len) == 0) {
			*out = make_handle(SLOT_ID(t->slots[j]), type);
			return MP_OK;
		}
	}
	if (heap->natoms >= MAX_INDEX)
		return MP_E_LIMIT;
	err = grow((void **)&heap->atoms, &heap->atoms_cap, heap->natoms + 1, sizeof *heap->atoms);
	if (err != MP_OK)
		return err;
	copy = arena_alloc(&heap->bytes, len + 1, 1);
	if (copy == NULL)
		return MP_E_NOMEM;
	memcpy(copy, data, len);
	copy[len] = '\0';
	a = &heap->atoms[heap->natoms];
	a->data = copy;
	a->len = (uint32_t)len;
	a->hash = hash;
	a->type = (uint8_t)type;
	t->slots[j] = SLOT(hash, heap->natoms);
	t->count++;
	*out = make_handle(heap->natoms++, type);
	return MP_OK;
}

mp_err mp_heap_str(mp_heap *heap, const char *s, size_t len, mp_val *out)
{
	return intern_atom(heap, MP_T_STR, s, len, out);
}

mp_err mp_heap_bytes(mp_heap *heap, const void *b, size_t len, mp_val *out)
{
	return intern_atom(heap, MP_T_BYTES, b, len, out);
}

mp_err mp_heap_int(mp_heap *heap, int64_t i, mp_val *out)
{
	unsigned char le[8];

	if (mp_fits_small_int(i)) {
		*out = mp_val_from_small_int(i);
		return MP_OK;
	}
	for (int k = 0; k < 8; k++)
		le[k] = (unsigned char)((uint64_t)i >> (8 * k));
	return mp_heap_int_le(heap, le, 8, out);
}

mp_err mp_heap_int_le(mp_heap *heap, const unsigned char *le, size_t len, mp_val *out)
{
	/* Trim redundant sign bytes so that equal ints have equal bytes. */
	while (len > 1 && ((le[len - 1] == 0x00 && !(le[len - 2] & 0x80)) ||
			   (le[len - 1] == 0xff && (le[len - 2] & 0x80))))
		len--;
	if (len == 0) {
		*out = mp_val_from_small_int(0);
		return MP_OK;
	}
	if (len <= 8) {
		uint64_t u = (le[len - 1] & 0x80) ? ~(uint64_t)0 : 0;
		int64_t i;

		for (size_t k = 0; k < len; k++) {
			u &= ~((uint64_t)0xff << (8 * k));
			u |= (uint64_t)le[k] << (8 * k);
		}
		i = (int64_t)u;
		if (mp_fits_small_int(i)) {
			*out = mp_val_from_small_int(i);
			return MP_OK;
		}
	}
	return intern_atom(heap, MP_T_BIGINT, le, len, out);
}

mp_err mp_heap_float(mp_heap *heap, double d, mp_val *out)
{
	mp_err err;

	if (heap->nfloats >= MAX_INDEX)
		return MP_E_LIMIT;
	err = grow((void **)&heap->floats, &heap->floats_cap, heap->nfloats + 1, sizeof(double));
	if (err != MP_OK)
		return err;
	heap->floats[heap->nfloats] = d;
	*out = make_handle(heap->nfloats++, MP_T_FLOAT);
	return MP_OK;
}

const char *mp_heap_atom(const mp_heap *heap, mp_val v, size_t *len)
{
	enum mp_vtype t = mp_val_type(v);
	const struct atom *a;

	if (t != MP_T_STR && t != MP_T_BYTES && t != MP_T_BIGINT)
		return NULL;
	a = &heap->atoms[handle_index(v)];
	if (len != NULL)
		*len = a->len;
	return a->data;
}

double mp_heap_float_value(const mp_heap *heap, mp_val v)
{
	if (mp_val_type(v) != MP_T_FLOAT)
		return NAN;
	return heap->floats[handle_index(v)];
}

bool mp_heap_get_i64(const mp_heap *heap, mp_val v, int64_t *out)
{
	const struct atom *a;
	uint64_t u;

	if (mp_val_type(v) == MP_T_INT) {
		*out = mp_val_small_int(v);
		return true;
	}
	if (mp_val_type(v) != MP_T_BIGINT)
		return false;
	a = &heap->atoms[handle_index(v)];
	if (a->len > 8)
		return false;
	u = ((unsigned char)a->data[a->len - 1] & 0x80) ? ~(uint64_t)0 : 0;
	for (size_t k = 0; k < a->len; k++) {
		u &= ~((uint64_t)0xff << (8 * k));
		u |= (uint64_t)(unsigned char)a->data[k] << (8 * k);
	}
	*out = (int64_t)u;
	return true;
}

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
		err = grow((void **)&heap->conts, &heap->conts_cap, heap->nconts + 1,
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
		err = grow((void **)&heap->free_open, &heap->free_open_cap, heap->nopen + 1,
			   sizeof *heap->free_open);
		if (err != MP_OK)
			return err;
		err = grow((void **)&heap->open, &heap->open_cap, heap->nopen + 1, sizeof *heap->open);
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

bool mp_heap_is_open(const mp_heap *heap, mp_val cont)
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
	err = grow((void **)&o->items, &o->cap, o->n + nh, sizeof(mp_val));
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

/* Find a frozen container equal to TYPE/ITEMS (NH handles); its id in *FOUND,
   or the free table slot in *SLOT and the hash in *HASH. Large containers are
   not looked up. */
static mp_err hashcons_find(mp_heap *heap, uint8_t type, const mp_val *items, size_t nh,
			    size_t *found, size_t *slot, uint32_t *hash)
{
	struct idtable *t = &heap->cont_index;
	size_t j;
	mp_err err;

	*found = SIZE_MAX;
	*slot = SIZE_MAX;
	if (nh > HASHCONS_MAX_ITEMS)
		return MP_OK;
	err = idtable_reserve(t);
	if (err != MP_OK)
		return err;
	*hash = (uint32_t)cont_hash(type, items, nh);
	for (j = *hash & t->mask; t->slots[j] != 0; j = (j + 1) & t->mask) {
		const struct cont *o;

		if (SLOT_HASH(t->slots[j]) != *hash)
			continue;
		o = &heap->conts[SLOT_ID(t->slots[j])];
		if (o->type == type && o->n * handles_per_item(type) == nh &&
		    (nh == 0 || memcmp(o->d.items, items, nh * sizeof(mp_val)) == 0)) {
			*found = SLOT_ID(t->slots[j]);
			return MP_OK;
		}
	}
	*slot = j;
	return MP_OK;
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
	size_t npairs, nh, found, slot;
	uint32_t hash = 0;
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
	err = hashcons_find(heap, c->type, o->items, nh, &found, &slot, &hash);
	if (err != MP_OK)
		return err;
	if (found != SIZE_MAX) {
		close_open_slot(heap, c);
		c->state = CONT_ALIAS;
		c->d.canon = make_handle(found, c->type);
		*out = c->d.canon;
		return MP_OK;
	}
	items = arena_alloc(&heap->bytes, nh ? nh * sizeof(mp_val) : 1, sizeof(mp_val));
	if (items == NULL)
		return MP_E_NOMEM;
	if (nh > 0)
		memcpy(items, o->items, nh * sizeof(mp_val));
	close_open_slot(heap, c);
	c->n = (uint32_t)npairs;
	c->state = CONT_FROZEN;
	c->d.items = items;
	if (slot != SIZE_MAX) {
		heap->cont_index.slots[slot] = SLOT(hash, handle_index(cont));
		heap->cont_index.count++;
	}
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

mp_err mp_heap_make(mp_heap *heap, enum mp_vtype type, const mp_val *items, size_t n, mp_val *out)
{
	mp_val cont;
	mp_err err = mp_heap_open(heap, type, &cont);

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

mp_val mp_heap_resolve(const mp_heap *heap, mp_val v)
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

/* ---- whole heap */

mp_heap *mp_heap_new(void)
{
	mp_heap *heap = calloc(1, sizeof *heap);
	mp_err err = MP_OK;

	if (heap == NULL)
		return NULL;
#define K(name) \
	if (err == MP_OK) \
		err = mp_heap_str(heap, #name, sizeof #name - 1, &heap->keys.name);
	MP_KNOWN_KEYS
#undef K
	if (err != MP_OK) {
		mp_heap_free(heap);
		return NULL;
	}
	return heap;
}

void mp_heap_free(mp_heap *heap)
{
	if (heap == NULL)
		return;
	arena_free(&heap->bytes);
	for (size_t i = 0; i < heap->nopen; i++)
		free(heap->open[i].items);
	free(heap->open);
	free(heap->free_open);
	free(heap->atoms);
	free(heap->atom_index.slots);
	free(heap->floats);
	free(heap->conts);
	free(heap->cont_index.slots);
	free(heap);
}

const mp_keys *mp_heap_keys(const mp_heap *heap)
{
	return &heap->keys;
}

size_t mp_heap_footprint(const mp_heap *heap)
{
	size_t n = heap->bytes.total;

	n += heap->atoms_cap * sizeof *heap->atoms + heap->floats_cap * sizeof(double);
	n += heap->conts_cap * sizeof *heap->conts + heap->open_cap * sizeof *heap->open;
	n += (heap->atom_index.mask + 1 + heap->cont_index.mask + 1) * sizeof(uint64_t);
	return n;
}

/* ---- hashability */

bool mp_heap_hashable(const mp_heap *heap, mp_val v)
{
	mp_val small[64], *todo = small, *big;
	size_t n = 0, cap = 64;
	bool ok = true;

	v = mp_heap_resolve(heap, v);
	if (mp_val_type(v) != MP_T_TUPLE) /* the common case: an atom */
		return !mp_val_is_container(v);
	todo[n++] = v;
	while (ok && n > 0) {
		mp_val t = todo[--n];
		const mp_val *items = mp_heap_items(heap, t);
		size_t len = mp_heap_len(heap, t);

		if (n + len > cap) {
			big = realloc(todo == small ? NULL : todo, (n + len) * 2 * sizeof *big);
			if (big == NULL) {
				ok = false; /* cannot tell: refuse rather than write a bad pickle */
				break;
			}
			if (todo == small)
				memcpy(big, small, n * sizeof *big);
			todo = big;
			cap = (n + len) * 2;
		}
		for (size_t i = 0; i < len && ok; i++) {
			mp_val x = mp_heap_resolve(heap, items[i]);

			if (mp_val_type(x) == MP_T_TUPLE)
				todo[n++] = x;
			else
				ok = !mp_val_is_container(x);
		}
	}
	if (todo != small)
		free(todo);
	return ok;
}

/* ---- equality */

static bool int_equal_float(const mp_heap *heap, mp_val i, double d)
{
	int64_t v;

	if (!mp_heap_get_i64(heap, i, &v))
		return false; /* ints beyond int64 never equal a snapshot's floats */
	return (double)v == d && (int64_t)d == v;
}

static bool numeric_equal(const mp_heap *heap, mp_val a, mp_val b)
{
	enum mp_vtype ta = mp_val_type(a), tb = mp_val_type(b);
	int64_t ia = 0, ib = 0;

	if (ta == MP_T_BOOL)
		a = mp_val_from_small_int((int64_t)(a >> 4)), ta = MP_T_INT;
	if (tb == MP_T_BOOL)
		b = mp_val_from_small_int((int64_t)(b >> 4)), tb = MP_T_INT;
	if (ta == MP_T_FLOAT && tb == MP_T_FLOAT)
		return mp_heap_float_value(heap, a) == mp_heap_float_value(heap, b);
	if (ta == MP_T_FLOAT)
		return int_equal_float(heap, b, mp_heap_float_value(heap, a));
	if (tb == MP_T_FLOAT)
		return int_equal_float(heap, a, mp_heap_float_value(heap, b));
	if (mp_heap_get_i64(heap, a, &ia) && mp_heap_get_i64(heap, b, &ib))
		return ia == ib;
	return a == b; /* two big ints: interned */
}

static bool is_numeric(enum mp_vtype t)
{
	return t == MP_T_BOOL || t == MP_T_INT || t == MP_T_BIGINT || t == MP_T_FLOAT;
}

static bool dict_equal(const mp_heap *heap, mp_val a, mp_val b, int depth);

static bool equal_depth(const mp_heap *heap, mp_val a, mp_val b, int depth)
{
	enum mp_vtype ta, tb;
	size_t n;
	const mp_val *ia, *ib;

	a = mp_heap_resolve(heap, a);
	b = mp_heap_resolve(heap, b);
	if (a == b)
		return true;
	if (depth > 10000)
		return false;
	ta = mp_val_type(a);
	tb = mp_val_type(b);
	if (is_numeric(ta) && is_numeric(tb))
		return numeric_equal(heap, a, b);
	if (ta != tb)
		return false;
	if (ta == MP_T_DICT)
		return dict_equal(heap, a, b, depth);
	if (ta != MP_T_LIST && ta != MP_T_TUPLE)
		return false; /* interned atoms with different handles differ */
	n = mp_heap_len(heap, a);
	if (n != mp_heap_len(heap, b))
		return false;
	ia = mp_heap_items(heap, a);
	ib = mp_heap_items(heap, b);
	for (size_t i = 0; i < n; i++)
		if (!equal_depth(heap, ia[i], ib[i], depth + 1))
			return false;
	return true;
}

static bool dict_equal(const mp_heap *heap, mp_val a, mp_val b, int depth)
{
	size_t n = mp_heap_len(heap, a);
	const mp_val *ia = mp_heap_items(heap, a);

	if (n != mp_heap_len(heap, b))
		return false;
	for (size_t i = 0; i < n; i++) {
		mp_val vb = mp_heap_dict_get(heap, b, ia[2 * i]);

		if (vb == MP_ABSENT || !equal_depth(heap, ia[2 * i + 1], vb, depth + 1))
			return false;
	}
	return true;
}

bool mp_heap_equal(const mp_heap *heap, mp_val a, mp_val b)
{
	return equal_depth(heap, a, b, 0);
}
