/* oom_rules.c - the caching allocator's size rules and the settings they read, as the allocator model has them
   (src/allocsim): how a request is rounded, what cudaMalloc is asked for; and what live blocks would cost in
   segments of their own. */
#include <stdint.h>
#include <string.h>

#include "mp_sim_history.h"
#include "oom_int.h"

void oom_read_settings(const mp_snapshot *snap, mp_oom *o)
{
	o->settings_known = mp_sim_conf_from_snapshot(snap, o->release, &o->conf, o->conf_text, sizeof o->conf_text);
	o->max_split_size = o->conf.max_split_size;
	o->expandable = o->conf.expandable;
	o->gc_threshold = o->conf.gc_threshold;
	memcpy(o->divisions, o->conf.divisions, sizeof o->divisions);
}

int64_t oom_round_size(const mp_oom *o, int64_t size)
{
	return mp_sim_round_size(&o->conf, o->release, size);
}

int64_t oom_allocation_size(const mp_oom *o, int64_t rounded)
{
	return mp_sim_allocation_size(&o->conf, rounded);
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
