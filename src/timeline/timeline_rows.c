/* timeline_rows.c - the profiler's _coalesce_timeline one row at a time: a row whenever the time
   changes, carrying the previous row, PREEXISTING rows shown at t_min. Rows are made on the fly
   (not stored): a ring of millions of entries would otherwise need a 144-byte row each. */
#include <string.h>

#include "mp_timeline.h"

void mp_timeline_cursor_init(mp_timeline_cursor *c, const mp_timeline_device *d)
{
	memset(c, 0, sizeof *c);
	c->d = d;
}

/* The time E's row is keyed by (the profiler's t before t_min replaces negative ones). */
static int64_t row_key(const mp_timeline_event *e)
{
	return e->action == MP_TL_PREEXISTING ? -1 : e->time_us;
}

bool mp_timeline_next(mp_timeline_cursor *c)
{
	const mp_timeline_device *d = c->d;
	int64_t key;

	if (c->next >= d->nevents)
		return false;
	key = row_key(&d->events[c->next]);
	c->row.time = key < 0 ? d->t_min : key;
	for (; c->next < d->nevents && row_key(&d->events[c->next]) == key; c->next++) {
		const mp_timeline_event *e = &d->events[c->next];

		if (e->action == MP_TL_DESTROY)
			c->row.bytes[e->category] -= e->bytes;
		else
			c->row.bytes[e->category] += e->bytes;
	}
	return true;
}

mp_i128 mp_timeline_row_total(const mp_timeline_row *r)
{
	mp_i128 t = 0;

	for (int k = 0; k < MP_CAT__COUNT; k++)
		t += r->bytes[k];
	return t;
}

mp_i128 mp_timeline_row_bytes(const mp_timeline_row *r, enum mp_category c, enum mp_category_scheme scheme)
{
	mp_i128 t = 0;

	for (int k = 0; k < MP_CAT__COUNT; k++)
		if (mp_category_in((enum mp_category)k, scheme) == c)
			t += r->bytes[k];
	return t;
}

_Static_assert(MP_CAT_PARAMETER == 0 && MP_CAT_OPTIMIZER_STATE == 1 && MP_CAT_INPUT == 2 && MP_CAT_TEMPORARY == 3 &&
		       MP_CAT_ACTIVATION == 4 && MP_CAT_GRADIENT == 5 && MP_CAT_AUTOGRAD_DETAIL == 6,
	       "enum mp_category starts in the order of the profiler's _CATEGORY_TO_INDEX");

int mp_timeline_profiler_index(enum mp_category c)
{
	c = mp_category_in(c, MP_SCHEME_PROFILER);
	/* The profiler's columns are its Category in our enum's order, None (UNKNOWN) last. */
	return c == MP_CAT_UNKNOWN ? 7 : (int)c;
}

void mp_timeline_peak(const mp_timeline_device *d, mp_timeline_row *peak, mp_timeline_row *end, size_t *nrows)
{
	mp_timeline_cursor c;
	bool first = true;

	mp_timeline_cursor_init(&c, d);
	memset(peak, 0, sizeof *peak);
	*nrows = 0;
	while (mp_timeline_next(&c)) {
		if (first || mp_timeline_row_total(&c.row) > mp_timeline_row_total(peak))
			*peak = c.row;
		first = false;
		(*nrows)++;
	}
	*end = c.row;
}
