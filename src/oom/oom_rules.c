/* oom_rules.c - the caching allocator's size rules and the settings they read: how a request is rounded,
   which pool serves it, what cudaMalloc is asked for. Facts of c10/cuda/CUDACachingAllocator.cpp and
   CUDAAllocatorConfig, the same from 2.0 to 2.14 (large_segment_size, configurable since 2.9, keeps its 20 MiB
   default: the snapshot does not carry it). */
#include <stdint.h>
#include <string.h>

#include "oom_int.h"

/* Whether dict key K (a str handle) is NAME. */
static bool key_is(const mp_snapshot *snap, mp_val k, const char *name)
{
	size_t len;
	const char *s;

	if (mp_val_type(k) != MP_T_STR || (s = mp_heap_atom(snap->heap, k, &len)) == NULL)
		return false;
	return len == strlen(name) && memcmp(s, name, len) == 0;
}

void oom_read_settings(const mp_snapshot *snap, mp_oom *o)
{
	mp_val d = snap->allocator_settings;

	o->max_split_size = INT64_MAX;
	o->expandable = false;
	o->gc_threshold = 0;
	o->settings_known = false;
	memset(o->divisions, 0, sizeof o->divisions);
	if (!(snap->present & MP_F_TOP_ALLOCATOR_SETTINGS) || mp_val_type(d) != MP_T_DICT)
		return;
	o->settings_known = true;
	const mp_val *items = mp_heap_items(snap->heap, d);
	size_t n = mp_heap_len(snap->heap, d);

	for (size_t i = 0; i < n; i++) {
		mp_val k = items[2 * i], v = items[2 * i + 1];
		int64_t x;

		if (key_is(snap, k, "max_split_size") && mp_heap_get_i64(snap->heap, v, &x))
			o->max_split_size = x <= 0 ? INT64_MAX : x; /* −1 (SIZE_MAX as int64): none */
		else if (key_is(snap, k, "expandable_segments"))
			o->expandable = v == MP_TRUE;
		else if (key_is(snap, k, "garbage_collection_threshold") && mp_val_type(v) == MP_T_FLOAT)
			o->gc_threshold = mp_heap_float_value(snap->heap, v);
		else if (key_is(snap, k, "roundup_power2_divisions") && mp_val_type(v) == MP_T_DICT) {
			const mp_val *dv = mp_heap_items(snap->heap, v);

			for (size_t j = 0; j < mp_heap_len(snap->heap, v) && j < 16; j++)
				if (!mp_heap_get_i64(snap->heap, dv[2 * j + 1], &o->divisions[j]))
					o->divisions[j] = 0;
		}
	}
}

static int floor_log2(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

int64_t oom_round_size(const mp_oom *o, int64_t size)
{
	if (size < 512)
		return 512;
	int index = floor_log2((uint64_t)size) - 20;
	int64_t div = o->divisions[index < 0 ? 0 : index > 15 ? 15 : index];

	/* PyTorch takes powers of two up to a few thousand; anything larger is no setting it would keep */
	if (div > 1 && div <= 65536 && size > 512 * div) {
		/* the next of DIV equal steps between the powers of two around SIZE */
		if ((size & (size - 1)) == 0)
			return size;
		int64_t floor2 = (int64_t)1 << floor_log2((uint64_t)size);
		int64_t step = floor2 >> floor_log2((uint64_t)div);

		if (step == 0)
			return floor2 << 1;
		int64_t down = size & ~(step - 1);

		return down == size ? size : down + step;
	}
	return (size + 511) / 512 * 512;
}

int64_t oom_allocation_size(int64_t rounded)
{
	if (rounded <= OOM_SMALL_SIZE)
		return OOM_SMALL_BUFFER;
	if (rounded < OOM_MIN_LARGE_ALLOC)
		return OOM_LARGE_BUFFER;
	return (rounded + OOM_ROUND_LARGE - 1) / OOM_ROUND_LARGE * OOM_ROUND_LARGE;
}

void oom_relocation_add(oom_relocation *r, int64_t size)
{
	if (size <= OOM_SMALL_SIZE)
		r->small += size;
	else if (size < OOM_MIN_LARGE_ALLOC)
		r->medium += size;
	else
		r->large += (size + OOM_ROUND_LARGE - 1) / OOM_ROUND_LARGE * OOM_ROUND_LARGE;
}

void oom_relocation_sum(oom_relocation *r, const oom_relocation *a, int sign)
{
	r->small += sign * a->small;
	r->medium += sign * a->medium;
	r->large += sign * a->large;
}

int64_t oom_relocation_cost(const oom_relocation *r)
{
	/* small blocks pack into 2 MiB segments, 1–10 MiB ones into 20 MiB segments */
	return (r->small + OOM_SMALL_BUFFER - 1) / OOM_SMALL_BUFFER * OOM_SMALL_BUFFER +
	       (r->medium + OOM_LARGE_BUFFER - 1) / OOM_LARGE_BUFFER * OOM_LARGE_BUFFER + r->large;
}
