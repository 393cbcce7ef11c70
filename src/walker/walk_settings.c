/* walk_settings.c - CUDAAllocatorConfig (through its exported instance pointer) as the
   snapshot's allocator_settings (allocator-facts §3.8, §6.3). */
#include <stdlib.h>
#include <string.h>

#include "walk_int.h"

static bool has_settings_layout(struct walk *wk)
{
	return HAS(wk, CFG_MAX_SPLIT_SIZE) && HAS(wk, CFG_ROUNDUP_POWER2_DIVISIONS) &&
	       HAS(wk, CFG_GARBAGE_COLLECTION_THRESHOLD) && HAS(wk, CFG_PINNED_NUM_REGISTER_THREADS) &&
	       HAS(wk, CFG_EXPANDABLE_SEGMENTS) && HAS(wk, CFG_RELEASE_LOCK_ON_CUDAMALLOC) &&
	       HAS(wk, CFG_PINNED_USE_CUDA_HOST_REGISTER) && HAS(wk, CFG_LAST_ALLOCATOR_SETTINGS);
}

mp_err wk_settings(struct walk *wk, uint64_t instance_addr)
{
	mp_walk_settings *s = &wk->w->settings;
	uint64_t cfg, begin, v;
	uint8_t b;
	size_t n;
	mp_err err;

	if (instance_addr == 0 || !has_settings_layout(wk)) {
		mp_warn(wk->diag, "allocator settings are not readable for this PyTorch version; allocator_settings is left out");
		return MP_OK;
	}
	if (wk_read_u64(wk, instance_addr, &cfg) != MP_OK || cfg == 0) {
		mp_warn(wk->diag, "CUDAAllocatorConfig was never created in this process; allocator_settings is left out");
		return MP_OK;
	}
#define CFG(F) (cfg + (uint64_t)OFF(wk, F))
	if ((err = wk_read_u64(wk, CFG(CFG_MAX_SPLIT_SIZE), &v)) != MP_OK)
		goto damaged;
	s->max_split_size = (int64_t)v;
	if ((err = wk_read(wk, CFG(CFG_GARBAGE_COLLECTION_THRESHOLD), &s->garbage_collection_threshold,
			   sizeof s->garbage_collection_threshold)) != MP_OK ||
	    (err = wk_read_u64(wk, CFG(CFG_PINNED_NUM_REGISTER_THREADS), &v)) != MP_OK)
		goto damaged;
	s->pinned_num_register_threads = (int64_t)v;
	if ((err = mp_target_read_u8(wk->t, CFG(CFG_EXPANDABLE_SEGMENTS), &b, NULL)) != MP_OK)
		goto damaged;
	s->expandable_segments = b != 0;
	if ((err = mp_target_read_u8(wk->t, CFG(CFG_RELEASE_LOCK_ON_CUDAMALLOC), &b, NULL)) != MP_OK)
		goto damaged;
	s->release_lock_on_cudamalloc = b != 0;
	if ((err = mp_target_read_u8(wk->t, CFG(CFG_PINNED_USE_CUDA_HOST_REGISTER), &b, NULL)) != MP_OK)
		goto damaged;
	s->pinned_use_cuda_host_register = b != 0;
	/* roundup_power2_divisions: one size_t per power of two from 1 to 32768 */
	if ((err = wk_vector(wk, CFG(CFG_ROUNDUP_POWER2_DIVISIONS), 8, 16, &begin, &n)) != MP_OK || n != 16 ||
	    (err = wk_read(wk, begin, s->roundup_power2_divisions, sizeof s->roundup_power2_divisions)) != MP_OK)
		goto damaged;
	if ((err = wk_string(wk, CFG(CFG_LAST_ALLOCATOR_SETTINGS), &s->last_settings)) != MP_OK)
		goto damaged;
#undef CFG
	s->present = true;
	return MP_OK;
damaged:
	if (err == MP_E_NOMEM)
		return err;
	wk_damaged(wk, "CUDAAllocatorConfig at 0x%llx is unreadable or damaged; allocator_settings is left out",
		   (unsigned long long)cfg);
	return MP_OK;
}
