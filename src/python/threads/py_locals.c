/* py_locals.c - a frame's local variables: 3.11 on, the frame's localsplus array beside the code object's
   co_localsplusnames (and co_localspluskinds, whose cell and free variables hold cells, not values); 3.10,
   the PyFrameObject's f_localsplus beside co_varnames (the first co_nlocals slots). Offsets from each
   version's headers (Include/internal/pycore_frame.h, Include/cpython/code.h, frameobject.h); 3.13's from
   its _Py_DebugOffsets. */
#include <stdlib.h>

#include "mp_py_locals.h"

enum {
	TUPLE_SIZE = 16,
	TUPLE_ITEMS = 24,
	BYTES_DATA = 32,
	/* co_localspluskinds: CO_FAST_CELL, CO_FAST_FREE */
	KIND_CELL_OR_FREE = 0x40 | 0x80,
};

typedef struct frame_layout {
	uint32_t localsplus;  /* the frame's first slot */
	uint32_t names;       /* the code object's tuple of names */
	uint32_t kinds;       /* its bytes of kinds (0: none, 3.10) */
	uint32_t count;       /* int: how many slots hold locals (co_nlocalsplus; 3.10: co_nlocals) */
} frame_layout;

static bool layout_for(const mp_py_interp *py, const mp_py_runtime *rt, frame_layout *out)
{
	switch (py->minor) {
	case 10:
		*out = (frame_layout){ 352, 72, 0, 28 };
		return true;
	case 11:
		*out = (frame_layout){ 72, 96, 104, 76 };
		return true;
	case 12:
		*out = (frame_layout){ 72, 96, 104, 72 };
		return true;
	case 13:
		/* _Py_DebugOffsets: interpreter_frame.localsplus, code_object.localsplusnames / localspluskinds */
		*out = (frame_layout){ (uint32_t)mp_py_debug_field(rt, 256), (uint32_t)mp_py_debug_field(rt, 328),
				       (uint32_t)mp_py_debug_field(rt, 336), 72 };
		return out->localsplus != 0 && out->names != 0 && out->kinds != 0;
	default:
		return false;
	}
}

mp_err mp_py_frame_locals(mp_target *t, const mp_py_interp *py, const mp_py_runtime *rt, const mp_py_frame *f,
			  bool (*cb)(void *ctx, const char *name, uint64_t value), void *ctx, mp_diag *diag)
{
	frame_layout l;
	uint64_t names, kinds = 0, size, value, name_obj;
	uint32_t count;
	mp_err err;

	if (!layout_for(py, rt, &l))
		return mp_fail(diag, MP_E_UNSUPPORTED, "the frames of CPython %d.%d are not known", py->major, py->minor);
	if ((err = mp_target_read_u32(t, f->code + l.count, &count, diag)) != MP_OK ||
	    (err = mp_target_read_u64(t, f->code + l.names, &names, diag)) != MP_OK ||
	    (l.kinds != 0 && (err = mp_target_read_u64(t, f->code + l.kinds, &kinds, diag)) != MP_OK) ||
	    (err = mp_target_read_u64(t, names + TUPLE_SIZE, &size, diag)) != MP_OK)
		return err;
	if (count > MP_PY_MAX_LOCALS || size < count)
		return mp_fail(diag, MP_E_CORRUPT, "code object 0x%llx: %u locals, %llu names",
			       (unsigned long long)f->code, count, (unsigned long long)size);
	for (uint32_t i = 0; i < count; i++) {
		uint8_t kind = 0;
		char *name;
		bool more;

		if (kinds != 0 && (err = mp_target_read_u8(t, kinds + BYTES_DATA + i, &kind, diag)) != MP_OK)
			return err;
		if ((kind & KIND_CELL_OR_FREE) != 0)
			continue;
		if ((err = mp_target_read_u64(t, f->frame + l.localsplus + 8ull * i, &value, diag)) != MP_OK)
			return err;
		if (value == 0)
			continue; /* not bound (yet, or any more) */
		if ((err = mp_target_read_u64(t, names + TUPLE_ITEMS + 8ull * i, &name_obj, diag)) != MP_OK ||
		    (err = mp_py_read_str(t, py->layout, name_obj, &name, diag)) != MP_OK)
			return err;
		more = cb(ctx, name, value);
		free(name);
		if (!more)
			break;
	}
	return MP_OK;
}
