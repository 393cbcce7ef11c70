/* context_python.c - a Python frame {PyCodeObject*, lasti} as _snapshot() names it: co_filename,
   co_name and PyCode_Addr2Line(code, lasti), read through the CPython reader. Code objects are read
   once by address (a traceback holds a reference to each, so they stay alive and unchanged). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context_int.h"
#include "mp_array.h"
#include "mp_hash.h"

void ctx_python_init(struct ctx_python *py, mp_target *t, const mp_py_interp *interp, const char *why_not)
{
	memset(py, 0, sizeof *py);
	py->t = t;
	if (interp != NULL) {
		py->interp = *interp;
		py->found = true;
	} else {
		snprintf(py->why_not, sizeof py->why_not, "%s", why_not);
	}
}

void ctx_python_free(struct ctx_python *py)
{
	for (size_t i = 0; i < py->ncodes; i++)
		mp_py_code_free(&py->codes[i].code);
	free(py->codes);
	free(py->known);
	mp_table_free(&py->code_index);
	mp_table_free(&py->known_index);
	memset(py, 0, sizeof *py);
}

/* The code object at ADDR, read on first use; NULL when it cannot be read. */
static mp_err code_at(struct ctx_python *py, uint64_t addr, const mp_py_code **out)
{
	mp_table_probe p;
	struct ctx_code_obj *c;
	mp_diag diag = { 0 };
	uint32_t id;
	mp_err err;

	for (id = mp_table_find(&py->code_index, mp_table_hash_u64(addr), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&py->code_index, &p))
		if (py->codes[id].addr == addr) {
			*out = py->codes[id].ok ? &py->codes[id].code : NULL;
			return MP_OK;
		}
	if ((err = mp_array_grow((void **)&py->codes, &py->codes_cap, py->ncodes + 1, sizeof *py->codes)) != MP_OK ||
	    (err = mp_table_add(&py->code_index, &p, (uint32_t)py->ncodes)) != MP_OK)
		return err;
	c = &py->codes[py->ncodes++];
	*c = (struct ctx_code_obj){ .addr = addr };
	err = mp_py_read_code(py->t, py->interp.layout, &py->interp.types, addr, &c->code, &diag);
	if (err == MP_E_NOMEM)
		return err;
	c->ok = err == MP_OK;
	if (!c->ok)
		ctx_trouble_add(&py->unreadable, "code object at 0x%llx: %s", (unsigned long long)addr, diag.msg);
	*out = c->ok ? &c->code : NULL;
	return MP_OK;
}

mp_err ctx_python_frame(struct ctx_python *py, struct ctx_intern *in, uint64_t code, int32_t lasti, uint32_t *frame)
{
	mp_table_probe p;
	const mp_py_code *c = NULL;
	uint32_t id;
	mp_err err;

	for (id = mp_table_find(&py->known_index, mp_hash_finish(mp_hash_mix(code, (uint32_t)lasti)), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&py->known_index, &p))
		if (py->known[id].addr == code && py->known[id].lasti == lasti) {
			*frame = py->known[id].frame;
			return MP_OK;
		}
	if (!py->found)
		ctx_trouble_add(&py->unreadable, "%s", py->why_not);
	else if ((err = code_at(py, code, &c)) != MP_OK)
		return err;
	if (c != NULL) {
		int line = mp_py_code_line(py->interp.layout, c, lasti);

		/* PyTorch stores the line as uint64_t: -1 (no line) wraps. */
		err = ctx_intern_frame(in, c->filename, c->name, (uint64_t)(int64_t)line, frame);
	} else {
		err = ctx_intern_frame(in, "??", "<unreadable code object>", 0, frame);
	}
	if (err != MP_OK ||
	    (err = mp_array_grow((void **)&py->known, &py->known_cap, py->nknown + 1, sizeof *py->known)) != MP_OK ||
	    (err = mp_table_add(&py->known_index, &p, (uint32_t)py->nknown)) != MP_OK)
		return err;
	py->known[py->nknown++] = (struct ctx_code){ code, lasti, *frame };
	return MP_OK;
}
