/* sim_settings.c - the settings a job ran with, from its snapshot's allocator_settings: the settings string
   (PYTORCH_CUDA_ALLOC_CONF as last set) for what only it says, then the values the allocator holds, which win
   (they are what it used, whichever way they were set). */
#include <string.h>

#include "mp_sim_history.h"

static bool key_is(const mp_snapshot *snap, mp_val k, const char *name)
{
	size_t len;
	const char *s;

	if (mp_val_type(k) != MP_T_STR || (s = mp_heap_atom(snap->heap, k, &len)) == NULL)
		return false;
	return len == strlen(name) && memcmp(s, name, len) == 0;
}

bool mp_sim_conf_from_snapshot(const mp_snapshot *snap, mp_sim_release r, mp_sim_conf *c, char *text, size_t n)
{
	mp_val d = snap->allocator_settings;
	const mp_val *items;
	size_t len;

	mp_sim_conf_default(c);
	if (n > 0)
		text[0] = '\0';
	if (!(snap->present & MP_F_TOP_ALLOCATOR_SETTINGS) || mp_val_type(d) != MP_T_DICT)
		return false;
	items = mp_heap_items(snap->heap, d);
	len = mp_heap_len(snap->heap, d);
	for (size_t i = 0; i < len; i++) {
		size_t slen;
		const char *s;

		if (key_is(snap, items[2 * i], "PYTORCH_CUDA_ALLOC_CONF") && mp_val_type(items[2 * i + 1]) == MP_T_STR &&
		    (s = mp_heap_atom(snap->heap, items[2 * i + 1], &slen)) != NULL && slen < n) {
			mp_sim_conf parsed = *c;

			memcpy(text, s, slen);
			text[slen] = '\0';
			if (mp_sim_conf_parse(&parsed, text, r, NULL) == MP_OK)
				*c = parsed;
		}
	}
	for (size_t i = 0; i < len; i++) {
		mp_val k = items[2 * i], v = items[2 * i + 1];
		int64_t x;

		if (key_is(snap, k, "max_split_size") && mp_heap_get_i64(snap->heap, v, &x))
			c->max_split_size = x <= 0 ? MP_SIM_NONE : x; /* −1: SIZE_MAX, none */
		else if (key_is(snap, k, "expandable_segments"))
			c->expandable = v == MP_TRUE;
		else if (key_is(snap, k, "garbage_collection_threshold") && mp_val_type(v) == MP_T_FLOAT)
			c->gc_threshold = mp_heap_float_value(snap->heap, v);
		else if (key_is(snap, k, "roundup_power2_divisions") && mp_val_type(v) == MP_T_DICT) {
			const mp_val *dv = mp_heap_items(snap->heap, v);

			for (size_t j = 0; j < mp_heap_len(snap->heap, v) && j < MP_SIM_INTERVALS; j++)
				if (!mp_heap_get_i64(snap->heap, dv[2 * j + 1], &c->divisions[j]))
					c->divisions[j] = 0;
		}
	}
	return true;
}

/* Whether SNAP's top level has the key NAME. */
static bool has_top_key(const mp_snapshot *snap, const char *name)
{
	if (!mp_val_is_container(snap->shape))
		return false;
	const mp_val *keys = mp_heap_items(snap->heap, snap->shape);

	for (size_t i = 0; i < mp_heap_len(snap->heap, snap->shape); i++) {
		size_t len;
		const char *s = mp_val_type(keys[i]) == MP_T_STR ? mp_heap_atom(snap->heap, keys[i], &len) : NULL;

		if (s != NULL && len == strlen(name) && memcmp(s, name, len) == 0)
			return true;
	}
	return false;
}

/* The release a snapshot's shape tells: 2.14 added the host allocator's keys, 2.5 the annotations. Only the
   rules that differ between these (src/allocsim/sim_rules.c) depend on the guess. */
mp_sim_release mp_sim_release_of_snapshot(const mp_snapshot *snap)
{
	if (has_top_key(snap, "host_segments"))
		return (mp_sim_release){ 2, 14 };
	if (has_top_key(snap, "external_annotations"))
		return (mp_sim_release){ 2, 6 };
	return (mp_sim_release){ 2, 4 };
}
