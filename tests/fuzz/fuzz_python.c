/* fuzz_python.c - libFuzzer harness: the CPython and torch-object readers over a real Python training job's core
   (MEMPROF_FUZZ_PY_CORE: PyPI's torch on the fake device, history recorded; made by core_for.sh python) whose
   memory the input rewrites (fuzz_overlay.h). The work, each on the patched pages of its clean run: every
   Python thread's stack (pystack: the interpreter, thread states, frames, code objects, line tables), the
   allocator's walk and snapshot with frames (CapturedTraceback contexts to code objects), and the owners of its
   blocks through the Python heap (modules, parameters, gradients, optimizer state; tensors, storages, autograd
   meta) written into that snapshot. The input's flag leaves frames out of the snapshot. */
#include <string.h>

#include "fuzz_front.h"
#include "fuzz_overlay.h"
#include "mp_owners.h"
#include "mp_owners_report.h"
#include "mp_py_threads.h"
#include "mp_snapshot_walk.h"
#include "mp_walk.h"

static bool python(mp_target *t, const mp_c10 *c10, bool no_frames)
{
	mp_py_threads threads;
	mp_walk *w = NULL;
	mp_snapshot *snap = NULL;
	mp_owners *o = NULL;
	mp_walk_opts opts = { .max_blocks = 1u << 20 };
	mp_owners_opts oopts = { .max_objects = 1u << 20 };
	mp_diag diag = { 0 };
	bool ok = true;

	if (mp_py_threads_read_target(t, &threads, &diag) == MP_OK)
		mp_py_threads_free(&threads);
	else
		ok = false;
	memset(&diag, 0, sizeof diag);
	if (mp_walk_run(t, c10, &opts, &w, &diag) == MP_OK) {
		memset(&diag, 0, sizeof diag);
		if (mp_snapshot_from_walk(w, t, no_frames ? MP_SW_NO_FRAMES : 0, &snap, &diag) != MP_OK)
			ok = false;
		mp_walk_free(w);
	} else {
		ok = false;
	}
	memset(&diag, 0, sizeof diag);
	if (mp_owners_read(t, snap, &oopts, &o, &diag) == MP_OK) {
		memset(&diag, 0, sizeof diag);
		if (snap != NULL && mp_owners_annotate(o, snap, &diag) != MP_OK)
			ok = false;
		mp_owners_free(o);
	} else {
		ok = false;
	}
	mp_snapshot_free(snap);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_overlay_run("MEMPROF_FUZZ_PY_CORE", python, data, size);
	return 0;
}
