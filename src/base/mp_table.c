/* mp_table.c - the one hash table: growth, insertion and removal (lookups are inline in
   mp_table.h). */
#include "mp_table.h"

#include <stdbool.h>
#include <stdlib.h>

static uint32_t slot_hash(uint64_t slot)
{
	return (uint32_t)(slot >> 32);
}

/* The first free slot of the run that HASH starts in SLOTS (MASK + 1 of them). */
static size_t free_slot(const uint64_t *slots, size_t mask, uint32_t hash)
{
	size_t i = hash & mask;

	while (slots[i] != 0)
		i = (i + 1) & mask;
	return i;
}

void mp_table_free(mp_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof *t);
}

/* Double T's slots (or make the first ones). Every slot moves by its own hash bits: no entry of
   the caller is read. The 32 bits are enough because a table never has more than 2^32 slots. */
static mp_err grow(mp_table *t)
{
	size_t nsize = t->slots != NULL ? 2 * (t->mask + 1) : MP_TABLE_MIN_SLOTS;
	uint64_t *ns;

	if (nsize > SIZE_MAX / sizeof *ns)
		return MP_E_NOMEM;
	ns = calloc(nsize, sizeof *ns);
	if (ns == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; t->slots != NULL && i <= t->mask; i++)
		if (t->slots[i] != 0)
			ns[free_slot(ns, nsize - 1, slot_hash(t->slots[i]))] = t->slots[i];
	free(t->slots);
	t->slots = ns;
	t->mask = nsize - 1;
	return MP_OK;
}

mp_err mp_table_add_slow_(mp_table *t, mp_table_probe *p, uint32_t id)
{
	mp_err err;

	if (id == MP_TABLE_NONE || t->count >= MP_TABLE_MAX_COUNT)
		return MP_E_LIMIT;
	if ((err = grow(t)) != MP_OK)
		return err;
	/* The grown table puts the id where its hash says, not where P stopped. */
	p->pos = free_slot(t->slots, t->mask, p->hash);
	t->slots[p->pos] = mp_table_slot_(p->hash, id);
	t->count++;
	return MP_OK;
}

mp_err mp_table_insert(mp_table *t, uint64_t hash, uint32_t id)
{
	mp_table_probe p = { 0, (uint32_t)hash };

	if (t->slots != NULL)
		p.pos = free_slot(t->slots, t->mask, p.hash);
	return mp_table_add(t, &p, id);
}

/* Whether a slot whose run starts at HOME may move back into the free slot HOLE, the slot at AT
   being its own: yes unless HOME lies cyclically in (HOLE, AT], where a lookup would no longer
   pass HOLE on its way to it. */
static bool may_fill(size_t hole, size_t home, size_t at, size_t mask)
{
	return ((at - home) & mask) >= ((at - hole) & mask);
}

/* Backward-shift deletion: the slots after the hole that a lookup reaches only through it move
   back into it, so that no run is broken and no tombstone is left. */
void mp_table_remove(mp_table *t, const mp_table_probe *p)
{
	size_t hole = p->pos, at = p->pos;

	for (;;) {
		at = (at + 1) & t->mask;
		if (t->slots[at] == 0)
			break;
		if (may_fill(hole, slot_hash(t->slots[at]) & t->mask, at, t->mask)) {
			t->slots[hole] = t->slots[at];
			hole = at;
		}
	}
	t->slots[hole] = 0;
	t->count--;
}
