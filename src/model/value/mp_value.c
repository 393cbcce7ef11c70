/* mp_value.c - the value heap: its memory, interned atoms (str, bytes, big int) and floats. */
#include "mp_value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_hash.h"
#include "mp_utf8.h"
#include "mp_value_int.h"

/* ---- growth helpers */


void *mp_value_arena_alloc(struct arena *a, size_t size, size_t align)
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

/* ---- atoms */

/* The atom TYPE/DATA/LEN, found or added; CHECK_UTF8: only if DATA is UTF-8 (checked
   when it is added: a str found has the bytes of one checked before). */
static mp_err intern_atom(mp_heap *heap, enum mp_vtype type, const void *data, size_t len, bool check_utf8,
			  mp_val *out)
{
	mp_table *t = &heap->atom_index;
	mp_table_probe p;
	struct atom *a;
	char *copy;
	uint32_t id;
	mp_err err;

	if (len > UINT32_MAX - 1)
		return MP_E_LIMIT;
	for (id = mp_table_find(t, mp_hash_bytes(data, len, type), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(t, &p)) {
		a = &heap->atoms[id];
		if (a->type == type && a->len == len && memcmp(a->data, data, len) == 0) {
			*out = make_handle(id, type);
			return MP_OK;
		}
	}
	if (check_utf8 && !mp_utf8_valid(data, len, true))
		return MP_E_CORRUPT;
	if (heap->natoms >= MAX_INDEX)
		return MP_E_LIMIT;
	err = mp_array_grow((void **)&heap->atoms, &heap->atoms_cap, heap->natoms + 1, sizeof *heap->atoms);
	if (err != MP_OK)
		return err;
	copy = mp_value_arena_alloc(&heap->bytes, len + 1, 1);
	if (copy == NULL)
		return MP_E_NOMEM;
	memcpy(copy, data, len);
	copy[len] = '\0';
	a = &heap->atoms[heap->natoms];
	a->data = copy;
	a->len = (uint32_t)len;
	a->type = (uint8_t)type;
	if ((err = mp_table_add(t, &p, (uint32_t)heap->natoms)) != MP_OK)
		return err;
	*out = make_handle(heap->natoms++, type);
	return MP_OK;
}

mp_err mp_heap_str(mp_heap *heap, const char *s, size_t len, mp_val *out)
{
	return intern_atom(heap, MP_T_STR, s, len, false, out);
}

mp_err mp_heap_str_utf8(mp_heap *heap, const char *s, size_t len, mp_val *out)
{
	return intern_atom(heap, MP_T_STR, s, len, true, out);
}

mp_err mp_heap_bytes(mp_heap *heap, const void *b, size_t len, mp_val *out)
{
	return intern_atom(heap, MP_T_BYTES, b, len, false, out);
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
	return intern_atom(heap, MP_T_BIGINT, le, len, false, out);
}

mp_err mp_heap_float(mp_heap *heap, double d, mp_val *out)
{
	mp_err err;

	if (heap->nfloats >= MAX_INDEX)
		return MP_E_LIMIT;
	err = mp_array_grow((void **)&heap->floats, &heap->floats_cap, heap->nfloats + 1, sizeof(double));
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
	mp_table_free(&heap->atom_index);
	free(heap->floats);
	free(heap->conts);
	mp_table_free(&heap->cont_index);
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
	n += mp_table_bytes(&heap->atom_index) + mp_table_bytes(&heap->cont_index);
	return n;
}
