/* py_layouts.c - the offsets memprof reads in CPython's objects, per version (64-bit, default build).
   From CPython's headers (Include/cpython/code.h, unicodeobject.h, bytesobject.h). tests/python/objects.sh
   checks 3.10 to 3.13 against live interpreters and their cores; 3.14's is not run here. */
#include <stddef.h>

#include "mp_py.h"

static const mp_py_layout layouts[] = {
	/* 3.10: PyObject_HEAD, seven ints from co_argcount (firstlineno the 7th), then the object pointers;
	   str objects still carry wstr (PyASCIIObject 48, PyCompactUnicodeObject 72 bytes). */
	{ 3, 10, 40, 104, 112, 0, 120, 48, 72, 72, MP_PY_LINETABLE_310 },
	/* 3.11: PyObject_VAR_HEAD, consts/names/exceptiontable, flags and two shorts, then the ints. */
	{ 3, 11, 72, 112, 120, 128, 136, 48, 72, 72, MP_PY_LINETABLE_311 },
	/* 3.12 to 3.14: the shorts are gone (co_firstlineno at 68); str lost wstr (40 and 56 bytes). */
	{ 3, 12, 68, 112, 120, 128, 136, 40, 56, 56, MP_PY_LINETABLE_311 },
	{ 3, 13, 68, 112, 120, 128, 136, 40, 56, 56, MP_PY_LINETABLE_311 },
	{ 3, 14, 68, 112, 120, 128, 136, 40, 56, 56, MP_PY_LINETABLE_311 },
};

const mp_py_layout *mp_py_layout_for(int major, int minor)
{
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}
