/* mp_py.h - CPython objects read from a target's memory: the few struct layouts memprof needs per CPython
   version (code objects, str, bytes), and readers that check what they read and bound every length. */
#ifndef MEMPROF_PY_H
#define MEMPROF_PY_H

#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_py_linetable.h"
#include "mp_target.h"

/* Where the fields are in one CPython version (64-bit builds, the default, not free-threaded). */
typedef struct mp_py_layout {
	int major, minor;
	uint32_t code_firstlineno;           /* int */
	uint32_t code_filename, code_name;   /* str */
	uint32_t code_qualname;              /* str; 0: the version has none (co_name serves) */
	uint32_t code_linetable;             /* bytes */
	uint32_t str_ascii_data;             /* a compact ASCII str's characters */
	uint32_t str_compact_data;           /* a compact non-ASCII str's characters */
	uint32_t str_data_any;               /* a legacy (not compact) str's pointer to its characters */
	enum mp_py_linetable_format linetable;
} mp_py_layout;

/* The layout of CPython MAJOR.MINOR, or NULL for a version memprof does not know. */
const mp_py_layout *mp_py_layout_for(int major, int minor);

/* Where the type objects of one interpreter are (0: not known, then not checked): an object is what it
   claims only if its ob_type points there. */
typedef struct mp_py_types {
	uint64_t code, str, bytes; /* PyCode_Type, PyUnicode_Type, PyBytes_Type */
} mp_py_types;

/* The CPython a target runs. */
typedef struct mp_py_interp {
	int major, minor, micro;   /* micro -1: not known (3.10, told by a file name) */
	char path[4096];           /* the file that holds it, as the target maps it */
	uint64_t bias;             /* that file's load bias */
	const mp_py_layout *layout;
	mp_py_types types;         /* its exported type objects, at their load addresses */
	uint64_t runtime;          /* _PyRuntime's address (0: not exported) */
} mp_py_interp;

/* Find the interpreter among T's mapped files: the libpython or python executable that defines Py_Version,
   read from the target's memory (3.11 and later), or for 3.10 the version in the name of the file that defines
   Py_Initialize. Only files named like CPython's (python3.X) are opened. MP_E_NOTFOUND when there is none;
   MP_E_UNSUPPORTED (with *OUT filled but no layout) for a version memprof cannot read. */
mp_err mp_py_find(mp_target *t, mp_py_interp *out, mp_diag *diag) MP_WUR;

/* Longest texts and tables memprof reads: a longer one is damage, not a name. */
#define MP_PY_MAX_STR 4096
#define MP_PY_MAX_LINETABLE (1u << 20)

/* The str object at ADDR as UTF-8 in *OUT (malloc'd, NUL-terminated; the caller frees it). MP_E_CORRUPT with
   DIAG when it is not a str this layout describes, MP_E_LIMIT when longer than MP_PY_MAX_STR characters. */
mp_err mp_py_read_str(mp_target *t, const mp_py_layout *l, uint64_t addr, char **out, mp_diag *diag) MP_WUR;

/* The bytes object at ADDR in *OUT (malloc'd) and *LEN, at most MAX bytes. */
mp_err mp_py_read_bytes(mp_target *t, uint64_t addr, size_t max, unsigned char **out, size_t *len,
			mp_diag *diag) MP_WUR;

/* What a frame needs of a code object. */
typedef struct mp_py_code {
	char *filename, *name, *qualname;
	int firstlineno;
	unsigned char *linetable;
	size_t linetable_len;
} mp_py_code;

/* The code object at ADDR. With TYPES (NULL: no check), the object and its str and bytes fields must be of
   those types (MP_E_CORRUPT otherwise: a pointer to something else, or an interpreter misread). On failure
   *OUT is empty and DIAG says which field could not be read. */
mp_err mp_py_read_code(mp_target *t, const mp_py_layout *l, const mp_py_types *types, uint64_t addr, mp_py_code *out,
		       mp_diag *diag) MP_WUR;
void mp_py_code_free(mp_py_code *c);

/* The line of the instruction at byte offset LASTI of C: PyCode_Addr2Line(code, lasti). */
int mp_py_code_line(const mp_py_layout *l, const mp_py_code *c, int lasti);

#endif
