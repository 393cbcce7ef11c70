/* py_heap_int.h - private to the heap reader (py_heap*.c, py_gc.c, py_types.c, py_dict.c, py_seq.c,
   py_attrs.c, py_modules.c): the per-version offsets it reads with, and the reader's state. */
#ifndef MEMPROF_PY_HEAP_INT_H
#define MEMPROF_PY_HEAP_INT_H

#include "mp_py_heap.h"

/* How a version keeps a dict's keys table. */
enum py_keys_format {
	PY_KEYS_310,   /* dk_size (a Py_ssize_t), dk_lookup; every entry {hash, key, value} */
	PY_KEYS_311,   /* dk_log2_size, dk_log2_index_bytes, dk_kind; str-only tables have {key, value} entries */
};

/* How a version keeps a split dict's values (and an instance's values beside it). */
enum py_values_format {
	PY_VALUES_310, /* an array of values, in the order of the shared keys */
	PY_VALUES_311, /* an array whose prefix bytes (before it) hold its size and the insertion order */
	PY_VALUES_313, /* a header {capacity, size, embedded, valid}, the values, then the insertion order */
};

/* Where a version keeps an instance's __dict__ when its type manages it (MP_PY_TPFLAGS_MANAGED_DICT). */
enum py_attrs_format {
	PY_ATTRS_310,  /* no managed dicts: tp_dictoffset only */
	PY_ATTRS_311,  /* values pointer 32 bytes before the object, dict pointer 24 before */
	PY_ATTRS_312,  /* one word 24 bytes before: values (tagged with bit 0) or the dict */
	PY_ATTRS_313,  /* dict pointer 24 before; values inline after the object (MP_PY_TPFLAGS_INLINE_VALUES) */
};

/* The offsets the heap reader uses in one CPython version (64-bit, default build). */
typedef struct py_heap_layout {
	int minor;
	/* PyInterpreterState */
	uint32_t interp_gc, interp_modules;
	/* struct _gc_runtime_state: the lists' heads (generations, then the permanent one) */
	uint32_t gc_lists[4];
	uint32_t gc_gen0;          /* the pointer to the youngest generation's head (0: none), which wins */
	uint32_t gc_collecting;
	/* PyTypeObject, PyHeapTypeObject */
	uint32_t type_size;
	uint32_t tp_name, tp_basicsize, tp_itemsize, tp_flags, tp_base, tp_dict, tp_dictoffset, tp_mro;
	uint32_t ht_cached_keys;
	/* PyDictObject, PyDictKeysObject */
	uint32_t dict_keys, dict_values;
	enum py_keys_format keys;
	enum py_values_format values;
	enum py_attrs_format attrs;
	/* list, tuple: ob_size and the items (the list's pointer to them, the tuple's first) */
	uint32_t list_size, list_items, tuple_size, tuple_items;
	/* int: ob_size (3.10, 3.11) or lv_tag (3.12 on), then 30-bit digits */
	bool long_tag;
	uint32_t long_size, long_digits;
	uint32_t float_value;
	uint32_t module_dict;
} py_heap_layout;

/* The layout of CPython 3.MINOR before what its _Py_DebugOffsets say (3.13 on), or NULL. */
const py_heap_layout *py_heap_layout_for(int minor);

/* LAYOUT with what RT's _Py_DebugOffsets say (3.13 on) put over the table's values. A debug value that does
   not fit its struct is a warning and the table's stays. */
void py_heap_layout_debug(py_heap_layout *layout, const mp_py_runtime *rt, mp_diag *diag);

/* One cached type (or a refusal: TYPE NULL). */
typedef struct py_type_slot {
	uint64_t addr;
	mp_py_type *type;
} py_type_slot;

struct mp_py_heap {
	mp_target *t;
	const mp_py_interp *py;
	const mp_py_runtime *rt;
	py_heap_layout l;
	mp_py_heap_syms syms;
	uint64_t max_objects;
	uint64_t count;            /* objects of the last walk */
	py_type_slot *types;       /* open addressing by address; a power of two long */
	size_t ntypes, captypes;
	unsigned type_depth;       /* nested type reads (a type's dict holds objects of types) */
};

/* The ob_type of OBJ's type has FLAG set, or OBJ's type is EXACT: the type checks of str, int, dict, list and
   tuple (their fast subclass bits). */
bool py_heap_is_kind(mp_py_heap *h, uint64_t obj, uint64_t exact, uint64_t flag, mp_diag *diag);

/* Whether the str at OBJ is (exactly) the UTF-8 text S; false for anything else, errors included. */
bool py_heap_str_equals(mp_py_heap *h, uint64_t obj, const char *s);

/* Call CB for each item of a split table: KEYS (a PyDictKeysObject) and VALUES (a values array of this
   version's format). The instance attribute reader shares it with the dict reader. */
mp_err py_heap_split_each(mp_py_heap *h, uint64_t keys, uint64_t values, bool (*cb)(void *ctx, uint64_t key,
		       uint64_t value), void *ctx, mp_diag *diag) MP_WUR;

#endif
