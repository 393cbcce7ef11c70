/* py_threads.c - the thread states of every interpreter (PyInterpreterState's list, newest first), each with
   its ids, whether it is the main thread or holds the GIL, the exception it handles or raises, and its frames
   (py_frames.c). A damaged list is cut with a warning; what was read is kept. */
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "py_threads_int.h"

/* Offsets every version shares (64-bit): PyObject's ob_type, PyTypeObject's tp_name and tp_flags, a
   tuple's ob_size and ob_item, BaseException's args. */
enum {
	OB_TYPE = 8,
	TP_NAME = 24,
	TP_FLAGS = 168,
	TUPLE_SIZE = 16,
	TUPLE_ITEMS = 24,
	EXC_ARGS = 24,
	MAX_EXC_ITEMS = 1024, /* exception stack entries (one per running generator and the thread) */
	MAX_TYPE_NAME = 512,
};

/* tp_flags: the type's instances are tuples, str, exceptions. */
#define TPF_TUPLE (1ul << 26)
#define TPF_UNICODE (1ul << 28)
#define TPF_BASE_EXC (1ul << 30)

/* The 64-bit word at ADDR, 0 when it cannot be read (where 0 means "none" anyway). */
static uint64_t word_or_zero(mp_target *t, uint64_t addr)
{
	uint64_t v;

	return mp_target_read_u64(t, addr, &v, NULL) == MP_OK ? v : 0;
}

/* The tp_flags of OBJ's type (0 when unreadable), its type in *TYPE. */
static uint64_t type_flags(mp_target *t, uint64_t obj, uint64_t *type)
{
	uint64_t flags;

	if (obj == 0 || mp_target_read_u64(t, obj + OB_TYPE, type, NULL) != MP_OK || *type == 0 ||
	    mp_target_read_u64(t, *type + TP_FLAGS, &flags, NULL) != MP_OK)
		return 0;
	return flags;
}

/* str(args[0]) of exception EXC when it is a str: malloc'd into *OUT, else NULL. */
static void exc_message(mp_target *t, const mp_py_interp *py, uint64_t exc, char **out)
{
	uint64_t args, type, n, first;

	*out = NULL;
	if (mp_target_read_u64(t, exc + EXC_ARGS, &args, NULL) != MP_OK || !(type_flags(t, args, &type) & TPF_TUPLE) ||
	    mp_target_read_u64(t, args + TUPLE_SIZE, &n, NULL) != MP_OK || n < 1 ||
	    mp_target_read_u64(t, args + TUPLE_ITEMS, &first, NULL) != MP_OK || !(type_flags(t, first, &type) & TPF_UNICODE))
		return;
	if (py->types.str != 0 && type != py->types.str)
		return; /* a str subclass may lay itself out otherwise */
	if (mp_py_read_str(t, py->layout, first, out, NULL) != MP_OK)
		*out = NULL;
}

/* Record exception EXC (or, when EXC is no exception instance, the type TYPE of one not yet made) in TH. */
static mp_err set_exception(mp_target *t, const mp_py_interp *py, uint64_t exc, uint64_t type, bool raising,
			    mp_py_thread *th)
{
	uint64_t name;
	size_t len;

	if (exc != 0 && (type_flags(t, exc, &type) & TPF_BASE_EXC))
		th->exc = exc;
	else
		exc = 0;
	if (type == 0 || mp_target_read_u64(t, type + TP_NAME, &name, NULL) != MP_OK ||
	    mp_target_read_cstr(t, name, MAX_TYPE_NAME, &th->exc_type, &len, NULL) != MP_OK) {
		th->exc = 0;
		th->exc_type = NULL;
		return MP_OK;
	}
	th->exc_raising = raising;
	if (exc != 0)
		exc_message(t, py, exc, &th->exc_msg);
	return MP_OK;
}

/* The exception TSTATE raises, else the one it handles (sys.exception(): the innermost entry of its
   exception stack that holds one). */
static mp_err read_exception(mp_target *t, const mp_py_interp *py, const py_thread_layout *l, uint64_t tstate,
			     mp_py_thread *th)
{
	uint64_t exc = 0, type = 0, item;

	if (l->ts_current_exception != 0)
		exc = word_or_zero(t, tstate + l->ts_current_exception);
	else if ((type = word_or_zero(t, tstate + l->ts_curexc_type)) != 0)
		exc = word_or_zero(t, tstate + l->ts_curexc_value);
	if (exc != 0 || type != 0)
		return set_exception(t, py, exc, type, true, th);
	if (mp_target_read_u64(t, tstate + l->ts_exc_info, &item, NULL) != MP_OK)
		return MP_OK;
	for (int i = 0; item != 0 && i < MAX_EXC_ITEMS; i++) {
		if (mp_target_read_u64(t, item + l->exc_item_value, &exc, NULL) != MP_OK)
			return MP_OK;
		if (exc != 0 && (type_flags(t, exc, &type) & TPF_BASE_EXC))
			return set_exception(t, py, exc, 0, false, th);
		if (mp_target_read_u64(t, item + l->exc_item_previous, &item, NULL) != MP_OK)
			return MP_OK;
	}
	return MP_OK;
}

/* Who holds INTERP's GIL: *HOLDER the thread state (0: nobody); false when not known. */
static bool gil_holder(mp_target *t, const mp_py_runtime *rt, const py_thread_layout *l, uint64_t interp,
		       uint64_t *holder)
{
	uint64_t gil;
	uint32_t locked;

	if (l->runtime_gil != 0)
		gil = rt->addr + l->runtime_gil;
	else if (l->interp_gil_ptr == 0 || mp_target_read_u64(t, interp + l->interp_gil_ptr, &gil, NULL) != MP_OK)
		return false;
	if (gil == 0 || mp_target_read_u32(t, gil + l->gil_locked, &locked, NULL) != MP_OK ||
	    mp_target_read_u64(t, gil + l->gil_holder, holder, NULL) != MP_OK)
		return false;
	if (locked == 0)
		*holder = 0;
	return true;
}

/* What marks the main thread: its thread state (3.13 on) or its pthread id, in *TSTATE or *ID. */
static void main_thread(mp_target *t, const mp_py_runtime *rt, const py_thread_layout *l, uint64_t *tstate,
			uint64_t *id)
{
	*tstate = *id = 0;
	if (l->interp_threads_main != 0)
		*tstate = word_or_zero(t, rt->main_interp + l->interp_threads_main);
	else if (l->runtime_main_thread != 0)
		*id = word_or_zero(t, rt->addr + l->runtime_main_thread);
}

/* Read thread state TSTATE of INTERP into a new entry of OUT. */
static mp_err read_thread(mp_target *t, const mp_py_interp *py, const py_thread_layout *l,
			  struct py_code_cache *cache, uint64_t interp, uint64_t tstate, mp_py_threads *out,
			  size_t *cap, mp_diag *diag)
{
	mp_py_thread *th;
	mp_err err;

	if ((err = mp_array_grow((void **)&out->threads, cap, out->nthreads + 1, sizeof *out->threads)) != MP_OK)
		return err;
	th = &out->threads[out->nthreads++];
	*th = (mp_py_thread){ .tstate = tstate, .interp = interp };
	th->thread_id = word_or_zero(t, tstate + l->ts_thread_id);
	if (l->ts_native_thread_id != 0)
		th->native_thread_id = word_or_zero(t, tstate + l->ts_native_thread_id);
	if ((err = read_exception(t, py, l, tstate, th)) != MP_OK)
		return err;
	return py_frames_read(t, py, l, cache, tstate, th, diag);
}

/* Whether TSTATE is among the threads of OUT from FROM on. */
static bool listed(const mp_py_threads *out, size_t from, uint64_t tstate)
{
	for (size_t i = from; i < out->nthreads; i++)
		if (out->threads[i].tstate == tstate)
			return true;
	return false;
}

/* The threads of interpreter INTERP, appended to OUT. */
static mp_err read_interp(mp_target *t, const mp_py_interp *py, const py_thread_layout *l,
			  struct py_code_cache *cache, uint64_t interp, mp_py_threads *out, size_t *cap, mp_diag *diag)
{
	size_t from = out->nthreads;
	uint64_t ts, owner;
	mp_diag why = { 0 };
	mp_err err;

	if (mp_target_read_u64(t, interp + l->interp_threads_head, &ts, &why) != MP_OK) {
		mp_warn_damage(diag, "interpreter 0x%llx: no thread list: %s", (unsigned long long)interp, why.msg);
		out->partial = true;
		return MP_OK;
	}
	while (ts != 0) {
		if (listed(out, from, ts)) {
			mp_warn_damage(diag, "interpreter 0x%llx: its threads loop back to 0x%llx: read up to there",
				(unsigned long long)interp, (unsigned long long)ts);
			out->partial = true;
			break;
		}
		if (out->nthreads == MP_PY_MAX_THREADS) {
			mp_warn(diag, "more than %d Python threads: the rest are not read", MP_PY_MAX_THREADS);
			out->partial = true;
			break;
		}
		/* a thread state names its interpreter: anything else is not one */
		if (mp_target_read_u64(t, ts + l->ts_interp, &owner, &why) != MP_OK || owner != interp) {
			mp_warn_damage(diag, "interpreter 0x%llx: 0x%llx is no thread state of it%s%s: the rest are not read",
				(unsigned long long)interp, (unsigned long long)ts, why.msg[0] ? ": " : "", why.msg);
			out->partial = true;
			break;
		}
		if ((err = read_thread(t, py, l, cache, interp, ts, out, cap, diag)) != MP_OK)
			return err;
		if (mp_target_read_u64(t, ts + l->ts_next, &ts, &why) != MP_OK) {
			mp_warn_damage(diag, "interpreter 0x%llx: thread list: %s", (unsigned long long)interp, why.msg);
			out->partial = true;
			break;
		}
	}
	return MP_OK;
}

/* Mark the main thread and the GIL's holders. */
static void mark(mp_target *t, const mp_py_runtime *rt, const py_thread_layout *l, mp_py_threads *out)
{
	uint64_t main_ts, main_id, holder = 0, interp = 0;
	bool known = false;

	main_thread(t, rt, l, &main_ts, &main_id);
	out->gil_known = out->nthreads > 0;
	for (size_t i = 0; i < out->nthreads; i++) {
		mp_py_thread *th = &out->threads[i];

		if (th->interp == rt->main_interp)
			th->is_main = main_ts != 0 ? th->tstate == main_ts : main_id != 0 && th->thread_id == main_id;
		if (i == 0 || th->interp != interp) {
			interp = th->interp;
			known = gil_holder(t, rt, l, interp, &holder);
			out->gil_known = out->gil_known && known;
		}
		th->holds_gil = known && holder == th->tstate;
	}
}

mp_err mp_py_threads_read(mp_target *t, const mp_py_interp *py, const mp_py_runtime *rt, mp_py_threads *out,
			  mp_diag *diag)
{
	struct py_code_cache *cache;
	py_thread_layout l;
	size_t cap = 0;
	unsigned warned = diag != NULL ? diag->nwarn : 0;
	mp_err err;

	memset(out, 0, sizeof *out);
	if (py->layout == NULL)
		return mp_fail(diag, MP_E_UNSUPPORTED, "%s: CPython %d.%d is not known", py->path, py->major, py->minor);
	if ((err = py_thread_layout_get(py, rt, &l, diag)) != MP_OK)
		return err;
	if ((cache = py_code_cache_new()) == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < rt->ninterps && err == MP_OK; i++)
		err = read_interp(t, py, &l, cache, rt->interps[i], out, &cap, diag);
	py_code_cache_free(cache);
	if (err != MP_OK) {
		mp_py_threads_free(out);
		return mp_fail(diag, err, "reading the Python threads: %s", mp_strerror(err));
	}
	out->main_interp = rt->main_interp;
	mark(t, rt, &l, out);
	for (size_t i = 0; i < out->nthreads; i++)
		out->partial = out->partial || out->threads[i].frames_cut;
	if (diag != NULL && diag->nwarn > warned)
		out->partial = true;
	if (out->nthreads == 0 && out->partial) {
		mp_py_threads_free(out);
		return mp_fail(diag, MP_E_CORRUPT, "%s: no Python thread could be read", py->path);
	}
	return MP_OK;
}

mp_err mp_py_threads_read_target(mp_target *t, mp_py_threads *out, mp_diag *diag)
{
	mp_py_interp py;
	mp_py_runtime *rt;
	mp_err err;

	memset(out, 0, sizeof *out);
	if ((err = mp_py_find(t, &py, diag)) != MP_OK)
		return err;
	if ((rt = malloc(sizeof *rt)) == NULL)
		return MP_E_NOMEM;
	if ((err = mp_py_runtime_read(t, &py, rt, diag)) == MP_OK)
		err = mp_py_threads_read(t, &py, rt, out, diag);
	free(rt);
	return err;
}

void mp_py_threads_free(mp_py_threads *threads)
{
	for (size_t i = 0; i < threads->nthreads; i++) {
		mp_py_thread *th = &threads->threads[i];

		for (size_t j = 0; j < th->nframes; j++) {
			free(th->frames[j].filename);
			free(th->frames[j].name);
			free(th->frames[j].qualname);
		}
		free(th->frames);
		free(th->exc_type);
		free(th->exc_msg);
	}
	free(threads->threads);
	memset(threads, 0, sizeof *threads);
}
