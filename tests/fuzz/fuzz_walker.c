/* fuzz_walker.c - libFuzzer harness: the walker over real test-bed cores of PyTorch's allocator (training, history,
   private_pool, expandable: MEMPROF_FUZZ_CORE, made by core_for.sh walker) whose memory the input rewrites
   (fuzz_overlay.h): the pages a clean walk reads (the allocator object, device allocators, blocks, free-block
   trees, hash tables, private pools, expandable segments, the trace ring and its entries, contexts, the
   library's pointer slot) are patched, then the allocator is found again (the input's flag) or not, walked, its
   snapshot built with frames and written as a pickle: the self-check, the limits and the partial walks must
   hold. */
#include <string.h>

#include "fuzz_front.h"
#include "fuzz_overlay.h"
#include "mp_snapshot_file.h"
#include "mp_snapshot_walk.h"
#include "mp_walk.h"

/* Find (when asked), walk, snapshot with frames, pickle. Whether it walked. */
static bool walk(mp_target *t, const mp_c10 *found, bool find)
{
	mp_walk *w = NULL;
	mp_snapshot *snap = NULL;
	mp_walk_opts opts = { .max_blocks = 1u << 20 };
	mp_diag diag = { 0 };
	mp_c10 c10 = *found;
	mp_out out;
	bool walked;

	if (find && mp_c10_find(t, &c10, &diag) != MP_OK)
		return false;
	memset(&diag, 0, sizeof diag);
	walked = mp_walk_run(t, &c10, &opts, &w, &diag) == MP_OK;
	if (!walked) {
		if (diag.msg[0] == '\0')
			fuzz_fail("the walk failed without saying why");
		return false;
	}
	memset(&diag, 0, sizeof diag);
	if (mp_snapshot_from_walk(w, t, MP_SW_DEVICE_STATS, &snap, &diag) == MP_OK) {
		mp_out_init(&out);
		memset(&diag, 0, sizeof diag);
		if (mp_snapshot_save(snap, MP_FMT_PICKLE, &out, &diag) != MP_OK && diag.msg[0] == '\0')
			fuzz_fail("writing the walk's snapshot failed without saying why");
		mp_out_free(&out);
		mp_snapshot_free(snap);
	}
	mp_walk_free(w);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_overlay_run("MEMPROF_FUZZ_CORE", walk, data, size);
	return 0;
}
