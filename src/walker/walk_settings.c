/* walk_settings.c - the snapshot's allocator_settings: 2.6 keeps every setting in
   CUDAAllocatorConfig (through its exported instance pointer), 2.14 most of them in libc10's
   AcceleratorAllocatorConfig (a static found through libc10.so's .symtab) and the rest in
   CUDAAllocatorConfig (allocator-facts §3.8, §6.3, §12.1). */
#include <stdlib.h>
#include <string.h>

#include "walk_int.h"

/* Reads from the two config objects; the first failure sticks (ERR, and FAILED its address). */
struct cfg_read {
	struct walk *wk;
	uint64_t cfg;    /* the CUDAAllocatorConfig object */
	uint64_t aac;    /* the AcceleratorAllocatorConfig object; 0 where the layout needs none */
	uint64_t failed; /* the first address that could not be read */
	mp_err err;
};

/* Where a setting lies: in CUDAAllocatorConfig member IN_CFG when the layout has it there (2.6),
   else in AcceleratorAllocatorConfig member IN_AAC (2.14; MP_L__COUNT: a setting only
   CUDAAllocatorConfig holds). 0 when the layout has it in neither. */
static uint64_t setting_at(const struct cfg_read *r, enum mp_layout_field in_cfg, enum mp_layout_field in_aac)
{
	const int32_t *off = r->wk->L->off;

	if (off[in_cfg] != MP_LAYOUT_ABSENT)
		return r->cfg + (uint64_t)off[in_cfg];
	if (in_aac != MP_L__COUNT && off[in_aac] != MP_LAYOUT_ABSENT && r->aac != 0)
		return r->aac + (uint64_t)off[in_aac];
	return 0;
}

static void get_bytes(struct cfg_read *r, uint64_t addr, void *out, size_t len)
{
	if (r->err != MP_OK)
		return;
	if (addr == 0)
		r->err = MP_E_NOTFOUND;
	else
		r->err = wk_read(r->wk, addr, out, len);
	if (r->err != MP_OK)
		r->failed = addr;
}

static void get_i64(struct cfg_read *r, uint64_t addr, int64_t *out)
{
	uint64_t v = 0;

	get_bytes(r, addr, &v, sizeof v);
	*out = (int64_t)v;
}

static void get_bool(struct cfg_read *r, uint64_t addr, bool *out)
{
	uint8_t b = 0;

	get_bytes(r, addr, &b, 1);
	*out = b != 0;
}

/* roundup_power2_divisions (a vector of one size_t per power of two from 1 to 32768) and the
   settings string. */
static void get_vector_and_string(struct cfg_read *r, mp_walk_settings *s, uint64_t divisions, uint64_t text)
{
	uint64_t begin;
	size_t n;

	if (r->err != MP_OK)
		return;
	r->failed = divisions;
	if ((r->err = wk_vector(r->wk, divisions, 8, 16, &begin, &n)) != MP_OK)
		return;
	if (n != 16) {
		r->err = MP_E_CORRUPT;
		return;
	}
	r->failed = begin;
	if ((r->err = wk_read(r->wk, begin, s->roundup_power2_divisions, sizeof s->roundup_power2_divisions)) != MP_OK)
		return;
	r->failed = text;
	r->err = text != 0 ? wk_string(r->wk, text, &s->last_settings) : MP_E_NOTFOUND;
}

#define AT(r, CFG, AAC) setting_at(r, MP_L_##CFG, MP_L_##AAC)
#define CFG_ONLY(r, CFG) setting_at(r, MP_L_##CFG, MP_L__COUNT)

static void read_settings(struct cfg_read *r, mp_walk_settings *s)
{
	const struct walk *wk = r->wk;

	get_i64(r, AT(r, CFG_MAX_SPLIT_SIZE, AAC_MAX_SPLIT_SIZE), &s->max_split_size);
	get_bytes(r, AT(r, CFG_GARBAGE_COLLECTION_THRESHOLD, AAC_GARBAGE_COLLECTION_THRESHOLD),
		  &s->garbage_collection_threshold, sizeof s->garbage_collection_threshold);
	get_bool(r, AT(r, CFG_EXPANDABLE_SEGMENTS, AAC_USE_EXPANDABLE_SEGMENTS), &s->expandable_segments);
	get_i64(r, CFG_ONLY(r, CFG_PINNED_NUM_REGISTER_THREADS), &s->pinned_num_register_threads);
	get_bool(r, CFG_ONLY(r, CFG_RELEASE_LOCK_ON_CUDAMALLOC), &s->release_lock_on_cudamalloc);
	get_bool(r, CFG_ONLY(r, CFG_PINNED_USE_CUDA_HOST_REGISTER), &s->pinned_use_cuda_host_register);
	s->has_graph_capture_record_stream_reuse = HAS(wk, CFG_GRAPH_CAPTURE_RECORD_STREAM_REUSE);
	if (s->has_graph_capture_record_stream_reuse)
		get_bool(r, CFG_ONLY(r, CFG_GRAPH_CAPTURE_RECORD_STREAM_REUSE), &s->graph_capture_record_stream_reuse);
	s->has_pinned_limits = r->aac != 0 && HAS(wk, AAC_PINNED_MAX_ROUND_THRESHOLD) && HAS(wk, AAC_PINNED_MAX_CACHED_SIZE);
	if (s->has_pinned_limits) {
		get_i64(r, r->aac + (uint64_t)OFF(wk, AAC_PINNED_MAX_ROUND_THRESHOLD), &s->max_round_threshold);
		get_i64(r, r->aac + (uint64_t)OFF(wk, AAC_PINNED_MAX_CACHED_SIZE), &s->max_cached_size);
	}
	get_vector_and_string(r, s, AT(r, CFG_ROUNDUP_POWER2_DIVISIONS, AAC_ROUNDUP_POWER2_DIVISIONS),
			      AT(r, CFG_LAST_ALLOCATOR_SETTINGS, AAC_LAST_ALLOCATOR_SETTINGS));
}

/* Whether the layout places setting IN_CFG / IN_AAC (see setting_at) somewhere. */
static bool placed(const struct walk *wk, enum mp_layout_field in_cfg, enum mp_layout_field in_aac)
{
	return wk->L->off[in_cfg] != MP_LAYOUT_ABSENT || wk->L->off[in_aac] != MP_LAYOUT_ABSENT;
}

/* Whether the layout places every setting allocator_settings always has. */
static bool has_settings_layout(const struct walk *wk)
{
	return placed(wk, MP_L_CFG_MAX_SPLIT_SIZE, MP_L_AAC_MAX_SPLIT_SIZE) &&
	       placed(wk, MP_L_CFG_ROUNDUP_POWER2_DIVISIONS, MP_L_AAC_ROUNDUP_POWER2_DIVISIONS) &&
	       placed(wk, MP_L_CFG_GARBAGE_COLLECTION_THRESHOLD, MP_L_AAC_GARBAGE_COLLECTION_THRESHOLD) &&
	       placed(wk, MP_L_CFG_EXPANDABLE_SEGMENTS, MP_L_AAC_USE_EXPANDABLE_SEGMENTS) &&
	       placed(wk, MP_L_CFG_LAST_ALLOCATOR_SETTINGS, MP_L_AAC_LAST_ALLOCATOR_SETTINGS) &&
	       HAS(wk, CFG_PINNED_NUM_REGISTER_THREADS) && HAS(wk, CFG_RELEASE_LOCK_ON_CUDAMALLOC) &&
	       HAS(wk, CFG_PINNED_USE_CUDA_HOST_REGISTER);
}

/* Whether the layout keeps any setting in AcceleratorAllocatorConfig rather than CUDAAllocatorConfig. */
static bool needs_accel_config(const struct walk *wk)
{
	return !HAS(wk, CFG_MAX_SPLIT_SIZE) || !HAS(wk, CFG_ROUNDUP_POWER2_DIVISIONS) ||
	       !HAS(wk, CFG_GARBAGE_COLLECTION_THRESHOLD) || !HAS(wk, CFG_EXPANDABLE_SEGMENTS) ||
	       !HAS(wk, CFG_LAST_ALLOCATOR_SETTINGS);
}

/* The AcceleratorAllocatorConfig object C10 found, checked against the layout: its address, or 0
   with a warning (allocator_settings is then left out). */
static uint64_t accel_config(struct walk *wk, const mp_c10 *c10)
{
	uint8_t guard;

	if (c10->accel_config_addr == 0) {
		mp_warn(wk->diag, "AcceleratorAllocatorConfig not found: %s; allocator_settings is left out",
			c10->accel_config_why);
		return 0;
	}
	/* Its .symtab size tells a build the layout does not describe. */
	if (HAS(wk, AAC_SIZEOF) && c10->accel_config_size != (uint64_t)OFF(wk, AAC_SIZEOF)) {
		mp_warn(wk->diag,
			"AcceleratorAllocatorConfig in '%s' is %llu bytes, layout %s says %d; allocator_settings is left out",
			c10->libc10_path, (unsigned long long)c10->accel_config_size, wk->L->name,
			(int)OFF(wk, AAC_SIZEOF));
		return 0;
	}
	if (c10->accel_config_guard_addr != 0 &&
	    mp_target_read_u8(wk->t, c10->accel_config_guard_addr, &guard, NULL) == MP_OK && guard == 0) {
		mp_warn(wk->diag, "AcceleratorAllocatorConfig was never created in this process; allocator_settings is left out");
		return 0;
	}
	return c10->accel_config_addr;
}

mp_err wk_settings(struct walk *wk, const mp_c10 *c10)
{
	mp_walk_settings *s = &wk->w->settings;
	struct cfg_read r = { .wk = wk };
	uint64_t instance_addr = c10->config_instance_addr;

	if (instance_addr == 0 || !has_settings_layout(wk)) {
		mp_warn(wk->diag, "allocator settings are not readable for this PyTorch version; allocator_settings is left out");
		return MP_OK;
	}
	if (needs_accel_config(wk) && (r.aac = accel_config(wk, c10)) == 0)
		return MP_OK;
	if (wk_read_u64(wk, instance_addr, &r.cfg) != MP_OK || r.cfg == 0) {
		mp_warn(wk->diag, "CUDAAllocatorConfig was never created in this process; allocator_settings is left out");
		return MP_OK;
	}
	read_settings(&r, s);
	if (r.err == MP_E_NOMEM)
		return r.err;
	if (r.err != MP_OK) {
		free(s->last_settings);
		memset(s, 0, sizeof *s);
		wk_damaged(wk, "allocator settings at 0x%llx are unreadable or damaged (CUDAAllocatorConfig at 0x%llx%s); "
			   "allocator_settings is left out", (unsigned long long)r.failed, (unsigned long long)r.cfg,
			   r.aac != 0 ? ", AcceleratorAllocatorConfig in libc10" : "");
		return MP_OK;
	}
	s->present = true;
	return MP_OK;
}
