/* mp_py_heap.h - the Python heap of a target, read from outside: every object the cyclic garbage collector
   tracks, the type objects they point to, and the values memprof's analyses read out of them (str, int,
   float, dict, list, tuple, instance attributes, modules). CPython 3.10 to 3.14 (3.14 from its sources, not
   run here), default builds (not free-threaded). Every read is checked and every length bounded: damaged
   memory gives an error or a warning and a partial result. Nothing is written to the target. */
#ifndef MEMPROF_PY_HEAP_H
#define MEMPROF_PY_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_py.h"
#include "mp_py_runtime.h"
#include "mp_target.h"

/* Longest things read: more is damage (or a heap too big to walk whole). */
#define MP_PY_HEAP_MAX_OBJECTS 20000000u /* the default of mp_py_heap_opts.max_objects */
#define MP_PY_MAX_MRO 64                 /* classes in a type's MRO */
#define MP_PY_MAX_DICT (1u << 26)        /* entries of a dict's table */

typedef struct mp_py_heap mp_py_heap; /* opaque: target, interpreter, runtime, type cache */

/* Where the interpreter's own objects are. Found in its file's dynamic symbols (PyType_Type, ...); a caller
   without the file (a test's hand-made memory) names them. 0: not known (then objects that need it are
   refused as of an unknown type). */
typedef struct mp_py_heap_syms {
	uint64_t type, object;           /* PyType_Type, PyBaseObject_Type */
	uint64_t str, long_, float_;     /* PyUnicode_Type, PyLong_Type, PyFloat_Type */
	uint64_t dict, list, tuple;      /* PyDict_Type, PyList_Type, PyTuple_Type */
	uint64_t module, none;           /* PyModule_Type, _Py_NoneStruct */
} mp_py_heap_syms;

typedef struct mp_py_heap_opts {
	uint64_t max_objects;          /* 0: MP_PY_HEAP_MAX_OBJECTS; a longer walk stops there, with a warning */
	const mp_py_heap_syms *syms;   /* NULL: from the interpreter's file */
} mp_py_heap_opts;

/* A reader of the heap of the interpreter PY (mp_py_find) whose runtime is RT (mp_py_runtime_read; both must
   outlive *OUT), over T. OPTS may be NULL. MP_E_UNSUPPORTED for a version without a layout here,
   MP_E_NOTFOUND when PyType_Type cannot be found. The caller closes *OUT. */
mp_err mp_py_heap_open(mp_target *t, const mp_py_interp *py, const mp_py_runtime *rt, const mp_py_heap_opts *opts,
		       mp_py_heap **out, mp_diag *diag) MP_WUR;
void mp_py_heap_close(mp_py_heap *h); /* H may be NULL */

/* Call CB(CTX, OBJ, TYPE) for every GC-tracked object of every interpreter, once, with its ob_type (not
   checked: mp_py_heap_type does that); CB returns false to stop. The lists walked: each generation and the
   permanent one (3.14: young, the two old spaces, permanent). A damaged list (a link that cannot be read, an
   object whose back link is not the one before it, which also catches any cycle) is a warning and is read up
   to there; more than max_objects in all is a warning and the walk stops. A core taken while a collection
   ran may hold lists being rebuilt: a warning says so. MP_E_CORRUPT only when no list could be read;
   MP_E_UNSUPPORTED when the version's GC state cannot be found (3.14 without its debug offsets). A live
   process that runs on while it is read moves its lists: open its target with --stop's option for a sound walk. */
mp_err mp_py_heap_each(mp_py_heap *h, bool (*cb)(void *ctx, uint64_t obj, uint64_t type), void *ctx,
		       mp_diag *diag) MP_WUR;
/* How many objects the last mp_py_heap_each visited. */
uint64_t mp_py_heap_count(const mp_py_heap *h);

/* A type object, as memprof keeps it (owned by the heap's cache, valid until mp_py_heap_close). */
typedef struct mp_py_type {
	uint64_t addr;
	char *name;       /* the class's own name: "Parameter", "dict" (tp_name after its last dot) */
	char *module;     /* heap types: __module__ of the type's dict ("torch.nn.parameter"); static types:
			     tp_name before its last dot, else "builtins" */
	uint64_t flags;   /* tp_flags */
	int64_t basicsize, itemsize, dictoffset;
	uint64_t *mro;    /* tp_mro's types, the type itself first (else the tp_base chain) */
	size_t nmro;      /* at most MP_PY_MAX_MRO */
} mp_py_type;

/* tp_flags bits memprof reads (the same in 3.10 to 3.14, except where said). */
#define MP_PY_TPFLAGS_INLINE_VALUES (1ull << 2) /* 3.13 on */
#define MP_PY_TPFLAGS_MANAGED_DICT (1ull << 4)  /* 3.11 on */
#define MP_PY_TPFLAGS_HEAPTYPE (1ull << 9)
#define MP_PY_TPFLAGS_LONG_SUBCLASS (1ull << 24)
#define MP_PY_TPFLAGS_LIST_SUBCLASS (1ull << 25)
#define MP_PY_TPFLAGS_TUPLE_SUBCLASS (1ull << 26)
#define MP_PY_TPFLAGS_UNICODE_SUBCLASS (1ull << 28)
#define MP_PY_TPFLAGS_DICT_SUBCLASS (1ull << 29)
#define MP_PY_TPFLAGS_TYPE_SUBCLASS (1ull << 31)

/* The type object at TYPE, read once and cached by address; NULL when TYPE is not a readable type object:
   its own ob_type must be PyType_Type or a metaclass whose MRO holds PyType_Type, its name readable. Why it
   was refused goes to DIAG's message the first time (later lookups of the same address say nothing). */
const mp_py_type *mp_py_heap_type(mp_py_heap *h, uint64_t type, mp_diag *diag);

/* Whether a class in TY's MRO is MODULE.NAME ("torch.nn.parameter", "Parameter"). */
bool mp_py_type_is(mp_py_heap *h, const mp_py_type *ty, const char *module, const char *name);

/* The ob_type of the object at OBJ (not checked to be a type). */
mp_err mp_py_object_type(mp_py_heap *h, uint64_t obj, uint64_t *type, mp_diag *diag) MP_WUR;

/* Whether OBJ is None. */
bool mp_py_is_none(const mp_py_heap *h, uint64_t obj);

/* The str (or str subclass instance) at OBJ as UTF-8 in *OUT (malloc'd; the caller frees it); at most
   MP_PY_MAX_STR characters (MP_E_LIMIT). MP_E_TYPE when OBJ is no str. */
mp_err mp_py_str(mp_py_heap *h, uint64_t obj, char **out, mp_diag *diag) MP_WUR;

/* The int (or subclass instance: bool) at OBJ. MP_E_TYPE when OBJ is no int, MP_E_RANGE when its value does
   not fit in int64. */
mp_err mp_py_long(mp_py_heap *h, uint64_t obj, int64_t *out, mp_diag *diag) MP_WUR;

/* The float (or subclass instance) at OBJ. MP_E_TYPE when OBJ is no float. */
mp_err mp_py_float(mp_py_heap *h, uint64_t obj, double *out, mp_diag *diag) MP_WUR;

/* Call CB(CTX, KEY, VALUE) for each item of the dict (or dict subclass instance: defaultdict, OrderedDict,
   whose own order after move_to_end is not followed: the dict's insertion order is) at DICT, in insertion
   order; CB returns false to stop. Combined and split tables, str-only and general keys. MP_E_TYPE when DICT
   is no dict, MP_E_LIMIT for a table of more than MP_PY_MAX_DICT entries, MP_E_CORRUPT for a table that is
   not one (bad sizes, an index out of bounds), MP_E_NOTFOUND for one that cannot be read. */
mp_err mp_py_dict_each(mp_py_heap *h, uint64_t dict, bool (*cb)(void *ctx, uint64_t key, uint64_t value), void *ctx,
		       mp_diag *diag) MP_WUR;

/* The value of the str key KEY in the dict at DICT in *VALUE. MP_E_NOTFOUND (no DIAG text) when absent. */
mp_err mp_py_dict_get_str(mp_py_heap *h, uint64_t dict, const char *key, uint64_t *value, mp_diag *diag) MP_WUR;

/* Call CB(CTX, NAME, VALUE) for each instance attribute of the object at OBJ, in its __dict__'s order: from
   the dict at tp_dictoffset, or the managed dict (3.11 on), or the values kept beside the object with its
   type's shared keys (3.11/3.12 values arrays, 3.13 on inline values). NAME is valid during the call. An
   object without a __dict__ has no attributes (MP_OK, no call); __slots__ are not read; a key that is no str
   is passed over. CB returns false to stop. */
mp_err mp_py_attrs_each(mp_py_heap *h, uint64_t obj, bool (*cb)(void *ctx, const char *name, uint64_t value),
			void *ctx, mp_diag *diag) MP_WUR;

/* The instance attribute NAME of the object at OBJ in *VALUE. MP_E_NOTFOUND (no DIAG text) when it has none. */
mp_err mp_py_attr(mp_py_heap *h, uint64_t obj, const char *name, uint64_t *value, mp_diag *diag) MP_WUR;

/* The items of the list or tuple (or subclass instance) at OBJ in *ITEMS (malloc'd, the caller frees it; NULL
   when there are none) and *N. MP_E_LIMIT when it has more than MAX, MP_E_TYPE when OBJ is neither. */
mp_err mp_py_seq_items(mp_py_heap *h, uint64_t obj, uint64_t **items, size_t *n, size_t max, mp_diag *diag) MP_WUR;

/* The dict of the module NAME ("__main__") in the main interpreter's sys.modules, in *DICT. MP_E_NOTFOUND
   (no DIAG text) when sys.modules has no such name. */
mp_err mp_py_module_dict(mp_py_heap *h, const char *name, uint64_t *dict, mp_diag *diag) MP_WUR;

#endif
