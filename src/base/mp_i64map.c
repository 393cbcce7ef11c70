/* mp_i64map.c - the 64-bit map: a power-of-two table at most half full. */
#include "mp_i64map.h"

#include <stdlib.h>

#include "mp_hash.h"

static size_t home(const mp_i64map *m, int64_t key)
{
	return (size_t)mp_hash_finish((uint64_t)key) & (m->cap - 1);
}

static size_t find(const mp_i64map *m, int64_t key)
{
	size_t i = home(m, key);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

void mp_i64map_fini(mp_i64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	*m = (mp_i64map){ 0 };
}

static mp_err grow(mp_i64map *m)
{
	mp_i64map g = { .cap = m->cap ? 2 * m->cap : 64 };

	if (g.cap < m->cap || (g.keys = malloc(g.cap * sizeof *g.keys)) == NULL ||
	    (g.vals = malloc(g.cap * sizeof *g.vals)) == NULL || (g.used = calloc(g.cap, sizeof *g.used)) == NULL) {
		mp_i64map_fini(&g);
		return MP_E_NOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i]) {
			size_t j = find(&g, m->keys[i]);

			g.used[j] = true;
			g.keys[j] = m->keys[i];
			g.vals[j] = m->vals[i];
			g.n++;
		}
	mp_i64map_fini(m);
	*m = g;
	return MP_OK;
}

mp_err mp_i64map_put(mp_i64map *m, int64_t key, int64_t val)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap && grow(m) != MP_OK)
		return MP_E_NOMEM;
	i = find(m, key);
	if (!m->used[i]) {
		m->used[i] = true;
		m->keys[i] = key;
		m->n++;
	}
	m->vals[i] = val;
	return MP_OK;
}

bool mp_i64map_get(const mp_i64map *m, int64_t key, int64_t *val)
{
	size_t i;

	if (m->cap == 0 || !m->used[i = find(m, key)])
		return false;
	if (val != NULL)
		*val = m->vals[i];
	return true;
}

void mp_i64map_del(mp_i64map *m, int64_t key)
{
	size_t i, j;

	if (m->cap == 0 || !m->used[i = find(m, key)])
		return;
	m->used[i] = false;
	m->n--;
	/* pull back the entries after it whose probe chain went through the hole */
	for (j = (i + 1) & (m->cap - 1); m->used[j]; j = (j + 1) & (m->cap - 1)) {
		size_t h = home(m, m->keys[j]);

		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			m->used[i] = true;
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->used[j] = false;
			i = j;
		}
	}
}
