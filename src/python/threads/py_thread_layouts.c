/* py_thread_layouts.c - where thread states, frames and the GIL keep what the thread reader needs, per CPython
   version. 3.10 to 3.13: measured with `gdb -batch -ex 'ptype /o struct _ts'` (and _PyInterpreterFrame,
   _PyCFrame, _err_stackitem, _gil_runtime_state, PyCodeObject, _is, pyruntimestate) on the DWARF of pyenv's
   3.10.13, 3.11.7, 3.12.1 and 3.13.0 builds; tests/python/threads.sh checks them on live interpreters and
   their cores. From 3.13 on the interpreter's own _Py_DebugOffsets come first. 3.14's positions inside
   _Py_DebugOffsets (which grew threads_main, stackpointer, and in some sources code_object_generation,
   tlbc_generation, tlbc_index, co_tlbc) are facts from CPython's sources, not run here. */
#include <string.h>

#include "py_threads_int.h"

static const py_thread_layout tables[] = {
	{
		.minor = 10, .source = "table",
		.interp_threads_head = 8, .runtime_gil = 352, .runtime_main_thread = 72,
		.gil_holder = 8, .gil_locked = 16,
		.ts_size = 280, .ts_next = 8, .ts_interp = 16, .ts_thread_id = 176, .ts_frame = 24,
		.ts_exc_info = 144, .ts_curexc_type = 88, .ts_curexc_value = 96,
		.exc_item_value = 8, .exc_item_previous = 24,
		.kind = PY_FRAMES_OBJECTS, .frame_size = 352, .f_back = 24, .f_code = 32, .f_lasti = 96,
		.owner_cstack = -1,
	},
	{
		.minor = 11, .source = "table",
		.interp_threads_head = 16, .runtime_gil = 360, .runtime_main_thread = 80,
		.gil_holder = 8, .gil_locked = 16,
		.ts_size = 360, .ts_next = 8, .ts_interp = 16, .ts_thread_id = 152, .ts_native_thread_id = 160,
		.ts_cframe = 56, .cframe_current = 8,
		.ts_exc_info = 120, .ts_curexc_type = 96, .ts_curexc_value = 104,
		.exc_item_value = 0, .exc_item_previous = 8,
		.kind = PY_FRAMES_INTERP, .frame_size = 72, .f_back = 48, .f_code = 32, .f_lasti = 56, .f_owner = 69,
		.owner_generator = 1, .owner_cstack = -1,
		.code_adaptive = 184, .code_firsttraceable = 168,
	},
	{
		.minor = 12, .source = "table",
		.interp_threads_head = 72, .interp_gil_ptr = 384, .runtime_main_thread = 64,
		.gil_holder = 8, .gil_locked = 16,
		.ts_size = 288, .ts_next = 8, .ts_interp = 16, .ts_thread_id = 136, .ts_native_thread_id = 144,
		.ts_cframe = 56, .cframe_current = 0,
		.ts_exc_info = 104, .ts_current_exception = 96,
		.exc_item_value = 0, .exc_item_previous = 8,
		.kind = PY_FRAMES_INTERP, .frame_size = 72, .f_back = 8, .f_code = 0, .f_lasti = 56, .f_owner = 70,
		.owner_generator = 1, .owner_cstack = 3,
		.code_adaptive = 192, .code_firsttraceable = 176,
	},
	{
		.minor = 13, .source = "table",
		.interp_threads_head = 7344, .interp_threads_main = 7352, .interp_gil_ptr = 16,
		.gil_holder = 8, .gil_locked = 16,
		.ts_size = 304, .ts_next = 8, .ts_interp = 16, .ts_thread_id = 152, .ts_native_thread_id = 160,
		.ts_frame = 72,
		.ts_exc_info = 120, .ts_current_exception = 112,
		.exc_item_value = 0, .exc_item_previous = 8,
		.kind = PY_FRAMES_INTERP, .frame_size = 72, .f_back = 8, .f_code = 0, .f_lasti = 56, .f_owner = 70,
		.owner_generator = 1, .owner_cstack = 3,
		.code_adaptive = 200, .code_firsttraceable = 184,
	},
};

/* Where the sections of _Py_DebugOffsets start (byte offsets into it), per minor version. */
struct debug_sections {
	int minor;
	uint32_t interp, threads_main, ceval_gil, gil_state, gil_locked, gil_holder;
	uint32_t tstate, frame, code;
};

static const struct debug_sections sections[] = {
	/* 3.13: interpreter_state {size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
	   ceval_gil, gil_runtime_state, ..._enabled, ..._locked, ..._holder} */
	{ 13, 48, 0, 112, 120, 136, 144, 152, 224, 272 },
	/* 3.14 grew its table during its development, and the sources seen differ (as py_heap_layouts.c found):
	   both add threads_main after threads_head and a stack pointer to the frame; one also adds
	   code_object_generation and tlbc_generation to the interpreter, tlbc_index to the frame and co_tlbc to
	   the code. Each is tried; the one whose thread state starts prev, next, interp is taken. */
	{ 14, 48, 80, 120, 128, 144, 152, 176, 248, 312 },
	{ 14, 48, 80, 120, 128, 144, 152, 160, 232, 288 },
};

/* The 64-bit value at byte AT of the debug offsets, if it is a plausible offset inside a struct of at most
   1 MiB (pystack's rule). */
static bool field(const mp_py_runtime *rt, size_t at, uint32_t *out)
{
	uint64_t v = mp_py_debug_field(rt, at);

	if (at + 8 > rt->debug_len || v >= 1u << 20)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* Overwrite L's fields with those the runtime publishes for minor version S->minor; false when they are
   not what that version has (then L is unchanged). */
static bool from_debug(const mp_py_runtime *rt, const struct debug_sections *s, py_thread_layout *l)
{
	py_thread_layout d = *l;
	uint32_t ts_prev, ts_interp, gil_state = 0, locked = 0, holder = 0, chk;

	if (!field(rt, s->interp + 24, &d.interp_threads_head) || !field(rt, s->ceval_gil, &d.interp_gil_ptr) ||
	    !field(rt, s->gil_state, &gil_state) || !field(rt, s->gil_locked, &locked) ||
	    !field(rt, s->gil_holder, &holder) || !field(rt, s->tstate, &d.ts_size) ||
	    !field(rt, s->tstate + 8, &ts_prev) || !field(rt, s->tstate + 16, &d.ts_next) ||
	    !field(rt, s->tstate + 24, &ts_interp) || !field(rt, s->tstate + 32, &d.ts_frame) ||
	    !field(rt, s->tstate + 40, &d.ts_thread_id) || !field(rt, s->tstate + 48, &d.ts_native_thread_id) ||
	    !field(rt, s->frame, &d.frame_size) || !field(rt, s->frame + 8, &d.f_back) ||
	    !field(rt, s->frame + 16, &d.f_code) || !field(rt, s->frame + 24, &d.f_lasti) ||
	    !field(rt, s->frame + 40, &d.f_owner) || !field(rt, s->code + 72, &d.code_adaptive) ||
	    !field(rt, s->code, &chk))
		return false;
	if (s->threads_main != 0 && !field(rt, s->threads_main, &d.interp_threads_main))
		return false;
	else if (s->threads_main == 0)
		d.interp_threads_main = d.interp_threads_head + 8; /* struct pythreads: head, then main */
	/* a thread state starts prev, next, interp; every field lies inside its struct */
	if (ts_prev != 0 || d.ts_next != 8 || ts_interp != 16 || d.ts_frame + 8 > d.ts_size ||
	    d.ts_thread_id + 8 > d.ts_size || d.ts_native_thread_id + 8 > d.ts_size || d.f_back + 8 > d.frame_size ||
	    d.f_code + 8 > d.frame_size || d.f_lasti + 8 > d.frame_size || d.f_owner >= d.frame_size ||
	    d.code_adaptive >= chk || locked < gil_state || holder < gil_state || locked - gil_state > 256 ||
	    holder - gil_state > 256)
		return false;
	d.gil_locked = locked - gil_state;
	d.gil_holder = holder - gil_state;
	/* not published: in 3.13 (DWARF) current_exception and exc_info follow current_frame and the four
	   tracing fields; _co_firsttraceable lies 16 bytes before co_code_adaptive (3.11 to 3.13) */
	d.ts_current_exception = d.ts_frame + 40;
	d.ts_exc_info = d.ts_frame + 48;
	d.code_firsttraceable = d.code_adaptive - 16;
	if (s->minor >= 14)
		d.code_firsttraceable = 0; /* not checked on a real 3.14: show a frame not started rather than guess */
	d.source = "_Py_DebugOffsets";
	*l = d;
	return true;
}

mp_err py_thread_layout_get(const mp_py_interp *py, const mp_py_runtime *rt, py_thread_layout *out,
			    mp_diag *diag)
{
	const struct debug_sections *s = NULL;
	bool have = false;

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		if (py->major == 3 && tables[i].minor == py->minor) {
			*out = tables[i];
			have = true;
		}
	if (py->major == 3 && py->minor >= 14 && !have) {
		/* what 3.13 has, then the runtime's offsets over it; 3.14 adds owner values and tagged pointers */
		*out = tables[sizeof tables / sizeof tables[0] - 1];
		out->minor = py->minor;
		out->code_tagged = true;
	}
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
		if (py->major == 3 && sections[i].minor == py->minor) {
			s = &sections[i];
			if (rt->has_debug_offsets && from_debug(rt, s, out))
				return MP_OK;
		}
	if (s != NULL && rt->has_debug_offsets)
		mp_warn(diag, "%s: CPython %d.%d's _Py_DebugOffsets are not laid out as memprof expects: %s", py->path,
			py->major, py->minor, have ? "using memprof's table" : "no thread layout");
	if (have)
		return MP_OK;
	return mp_fail(diag, MP_E_UNSUPPORTED, "%s: where CPython %d.%d keeps its threads and frames is not known",
		       py->path, py->major, py->minor);
}
