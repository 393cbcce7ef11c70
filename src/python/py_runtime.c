/* py_runtime.c - _PyRuntime and its list of interpreters. Before 3.13 the offset of the list head is a fact
   of each version (from its headers, Include/internal/pycore_runtime.h); from 3.13 on the runtime starts with
   _Py_DebugOffsets, which says where it is. Every interpreter's first member is its successor. */
#include <string.h>

#include "mp_py_runtime.h"

/* _Py_DebugOffsets, 3.13 on: cookie[8], version, free_threaded, then runtime_state {size, finalizing,
   interpreters_head}, then interpreter_state {size, id, next, ...}. Before 3.13 an interpreter's first member
   is its successor; 3.13 put the eval loop's state first (its instrumentation version, not 0 once
   sys.monitoring or a tracer was used), and says where `next` went. */
enum {
	DEBUG_VERSION = 8,
	DEBUG_FREE_THREADED = 16,
	DEBUG_INTERPRETERS_HEAD = 40,
	DEBUG_INTERP_SIZE = 48,
	DEBUG_INTERP_NEXT = 64,
	INTERP_NEXT_BEFORE_313 = 0,
};

/* Where _PyRuntime.interpreters.head is before 3.13 (0: not known). */
static uint64_t interpreters_head_before_313(int minor)
{
	switch (minor) {
	case 10:
		return 32;
	case 11:
	case 12:
		return 40;
	default:
		return 0;
	}
}

uint64_t mp_py_debug_field(const mp_py_runtime *rt, size_t at)
{
	uint64_t v;

	if (!rt->has_debug_offsets || at + sizeof v > rt->debug_len)
		return 0;
	memcpy(&v, rt->debug + at, sizeof v);
	return v;
}

/* Read the debug offsets at the start of the runtime (3.13 on) and check them. */
static mp_err read_debug_offsets(mp_target *t, const mp_py_interp *py, mp_py_runtime *rt, mp_diag *diag)
{
	mp_err err;

	/* a short read near the end of a mapping is no error: keep what there is */
	rt->debug_len = sizeof rt->debug;
	while (rt->debug_len >= 64 && !mp_target_readable(t, rt->addr, rt->debug_len))
		rt->debug_len /= 2;
	if ((err = mp_target_read(t, rt->addr, rt->debug, rt->debug_len, diag)) != MP_OK)
		return err;
	if (memcmp(rt->debug, "xdebugpy", 8) != 0)
		return mp_fail(diag, MP_E_CORRUPT, "%s: _PyRuntime does not start with CPython's debug cookie", py->path);
	rt->has_debug_offsets = true;
	rt->debug_version = mp_py_debug_field(rt, DEBUG_VERSION);
	rt->free_threaded = mp_py_debug_field(rt, DEBUG_FREE_THREADED) != 0;
	if ((int)(rt->debug_version >> 24) != py->major || (int)(rt->debug_version >> 16 & 0xff) != py->minor)
		return mp_fail(diag, MP_E_CORRUPT, "%s: _PyRuntime's debug offsets are of version 0x%llx, not %d.%d",
			       py->path, (unsigned long long)rt->debug_version, py->major, py->minor);
	if (rt->free_threaded)
		return mp_fail(diag, MP_E_UNSUPPORTED, "%s: a free-threaded CPython %d.%d, which memprof cannot read",
			       py->path, py->major, py->minor);
	return MP_OK;
}

mp_err mp_py_runtime_read(mp_target *t, const mp_py_interp *py, mp_py_runtime *out, mp_diag *diag)
{
	uint64_t head_at, next_at = INTERP_NEXT_BEFORE_313, p;
	mp_err err;

	memset(out, 0, sizeof *out);
	if (py->runtime == 0)
		return mp_fail(diag, MP_E_NOTFOUND, "%s exports no _PyRuntime", py->path);
	out->addr = py->runtime;
	if (py->major == 3 && py->minor >= 13) {
		if ((err = read_debug_offsets(t, py, out, diag)) != MP_OK)
			return err;
		head_at = mp_py_debug_field(out, DEBUG_INTERPRETERS_HEAD);
		next_at = mp_py_debug_field(out, DEBUG_INTERP_NEXT);
		if (next_at + 8 > mp_py_debug_field(out, DEBUG_INTERP_SIZE))
			return mp_fail(diag, MP_E_CORRUPT, "%s: the debug offsets put an interpreter's successor at %llu",
				       py->path, (unsigned long long)next_at);
	} else {
		head_at = interpreters_head_before_313(py->minor);
	}
	if (head_at == 0 || head_at > 1u << 20)
		return mp_fail(diag, MP_E_UNSUPPORTED, "%s: where CPython %d.%d keeps its interpreters is not known",
			       py->path, py->major, py->minor);
	if ((err = mp_target_read_u64(t, out->addr + head_at, &p, diag)) != MP_OK)
		return err;
	while (p != 0) {
		for (size_t i = 0; i < out->ninterps; i++)
			if (out->interps[i] == p) {
				mp_warn_damage(diag, "%s: the list of interpreters loops back to 0x%llx: read up to there",
					py->path, (unsigned long long)p);
				goto done;
			}
		if (out->ninterps == MP_PY_MAX_INTERPS) {
			mp_warn(diag, "%s: more than %d interpreters: the rest are not read", py->path,
				MP_PY_MAX_INTERPS);
			break;
		}
		out->interps[out->ninterps++] = p;
		if ((err = mp_target_read_u64(t, p + next_at, &p, diag)) != MP_OK)
			return err;
	}
done:
	if (out->ninterps == 0)
		return mp_fail(diag, MP_E_NOTFOUND, "%s: no interpreter (the process has not initialised Python?)",
			       py->path);
	out->main_interp = out->interps[out->ninterps - 1];
	return MP_OK;
}
