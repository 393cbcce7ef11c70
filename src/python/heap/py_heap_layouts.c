/* py_heap_layouts.c - where the heap reader finds things in each CPython version (64-bit, default build).
   3.10 to 3.13: measured in the DWARF of pyenv's builds (gdb 'ptype /o' of struct _is, _gc_runtime_state,
   PyTypeObject, PyHeapTypeObject, PyDictObject, PyDictKeysObject, PyListObject, PyTupleObject, PyLongObject)
   and proven by tests/python/heap.sh. 3.14: from CPython's sources (its struct _gc_runtime_state keeps three
   lists and the permanent one where 3.13 kept them, less the generation0 pointer; tuples cache their hash),
   not run here. From 3.13 on the interpreter publishes its own offsets (_Py_DebugOffsets, at the start of
   _PyRuntime): py_heap_layout_debug puts them over the table. Debian's 3.13.5 keeps its three generations 4
   bytes before where 3.13.0's DWARF puts them (the permanent one where it was): the generation0 pointer
   (3.10-3.13) says where the first is, and the walk believes it. */
#include <stdbool.h>
#include <stddef.h>

#include "py_heap_int.h"

static const py_heap_layout layouts[] = {
	{
		.minor = 10,
		.interp_gc = 616, .interp_modules = 856,
		.gc_lists = { 24, 48, 72, 104 }, .gc_gen0 = 96, .gc_collecting = 200,
		.type_size = 408,
		.tp_name = 24, .tp_basicsize = 32, .tp_itemsize = 40, .tp_flags = 168, .tp_base = 256, .tp_dict = 264,
		.tp_dictoffset = 288, .tp_mro = 344, .ht_cached_keys = 872,
		.dict_keys = 32, .dict_values = 40,
		.keys = PY_KEYS_310, .values = PY_VALUES_310, .attrs = PY_ATTRS_310,
		.list_size = 16, .list_items = 24, .tuple_size = 16, .tuple_items = 24,
		.long_tag = false, .long_size = 16, .long_digits = 24,
		.float_value = 16, .module_dict = 16,
	},
	{
		.minor = 11,
		.interp_gc = 648, .interp_modules = 888,
		.gc_lists = { 24, 48, 72, 104 }, .gc_gen0 = 96, .gc_collecting = 200,
		.type_size = 408,
		.tp_name = 24, .tp_basicsize = 32, .tp_itemsize = 40, .tp_flags = 168, .tp_base = 256, .tp_dict = 264,
		.tp_dictoffset = 288, .tp_mro = 344, .ht_cached_keys = 872,
		.dict_keys = 32, .dict_values = 40,
		.keys = PY_KEYS_311, .values = PY_VALUES_311, .attrs = PY_ATTRS_311,
		.list_size = 16, .list_items = 24, .tuple_size = 16, .tuple_items = 24,
		.long_tag = false, .long_size = 16, .long_digits = 24,
		.float_value = 16, .module_dict = 16,
	},
	{
		.minor = 12,
		.interp_gc = 112, .interp_modules = 944,
		.gc_lists = { 24, 48, 72, 104 }, .gc_gen0 = 96, .gc_collecting = 200,
		.type_size = 416,
		.tp_name = 24, .tp_basicsize = 32, .tp_itemsize = 40, .tp_flags = 168, .tp_base = 256, .tp_dict = 264,
		.tp_dictoffset = 288, .tp_mro = 344, .ht_cached_keys = 880,
		.dict_keys = 32, .dict_values = 40,
		.keys = PY_KEYS_311, .values = PY_VALUES_311, .attrs = PY_ATTRS_312,
		.list_size = 16, .list_items = 24, .tuple_size = 16, .tuple_items = 24,
		.long_tag = true, .long_size = 16, .long_digits = 24,
		.float_value = 16, .module_dict = 16,
	},
	{
		.minor = 13,
		.interp_gc = 7400, .interp_modules = 7656,
		.gc_lists = { 24, 48, 72, 104 }, .gc_gen0 = 96, .gc_collecting = 200,
		.type_size = 416,
		.tp_name = 24, .tp_basicsize = 32, .tp_itemsize = 40, .tp_flags = 168, .tp_base = 256, .tp_dict = 264,
		.tp_dictoffset = 288, .tp_mro = 344, .ht_cached_keys = 880,
		.dict_keys = 32, .dict_values = 40,
		.keys = PY_KEYS_311, .values = PY_VALUES_313, .attrs = PY_ATTRS_313,
		.list_size = 16, .list_items = 24, .tuple_size = 16, .tuple_items = 24,
		.long_tag = true, .long_size = 16, .long_digits = 24,
		.float_value = 16, .module_dict = 16,
	},
	{
		/* the interpreter's offsets come from _Py_DebugOffsets only (0: none without them) */
		.minor = 14,
		.interp_gc = 0, .interp_modules = 0,
		.gc_lists = { 24, 48, 72, 96 }, .gc_collecting = 192,
		.type_size = 416,
		.tp_name = 24, .tp_basicsize = 32, .tp_itemsize = 40, .tp_flags = 168, .tp_base = 256, .tp_dict = 264,
		.tp_dictoffset = 288, .tp_mro = 344, .ht_cached_keys = 880,
		.dict_keys = 32, .dict_values = 40,
		.keys = PY_KEYS_311, .values = PY_VALUES_313, .attrs = PY_ATTRS_313,
		.list_size = 16, .list_items = 24, .tuple_size = 16, .tuple_items = 32,
		.long_tag = true, .long_size = 16, .long_digits = 24,
		.float_value = 16, .module_dict = 16,
	},
};

const py_heap_layout *py_heap_layout_for(int minor)
{
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/* Where the fields memprof takes are in one version's _Py_DebugOffsets (byte offsets into it). Each struct
   there starts with its size, then offsets into the struct. */
typedef struct debug_at {
	int minor;
	uint32_t interp_size, interp_gc, interp_modules;
	uint32_t type_size, tp_name, tp_flags;
	uint32_t tuple_size, tuple_items, tuple_obsize;
	uint32_t list_size, list_items, list_obsize;
	uint32_t dict_size, dict_keys, dict_values;
	uint32_t float_size, float_value;
	uint32_t long_size, long_tag, long_digits;
	uint32_t gc_size, gc_collecting;
} debug_at;

/* 3.13 has runtime, interpreter (13 fields), thread, frame, code, object, type, tuple, list, dict, float, long,
   bytes, str, gc. 3.14's table grew during its development and the sources seen differ: one adds threads_main
   to the interpreter, a stack pointer to the frame and a set struct before the dict; another also adds two
   interpreter fields, a frame field and a code field. Both are tried, and the one whose structs have the
   sizes these objects have is taken (the interpreter's first nine fields are where both put them). */
static const debug_at debug_ats[] = {
	{ 13, 48, 80, 88, 368, 376, 392, 400, 408, 416, 424, 432, 440, 448, 456, 464, 472, 480, 488, 496, 504, 568, 576 },
	{ 14, 48, 88, 96, 416, 424, 440, 448, 456, 464, 472, 480, 488, 528, 536, 544, 552, 560, 568, 576, 584, 648, 656 },
	{ 14, 48, 88, 96, 384, 392, 408, 416, 424, 432, 440, 448, 456, 496, 504, 512, 520, 528, 536, 544, 552, 616, 624 },
};

/* Whether the debug offsets of RT have the structs of the objects where D says, with their sizes. */
static bool plausible(const debug_at *d, const mp_py_runtime *rt)
{
	uint64_t type = mp_py_debug_field(rt, d->type_size), tuple = mp_py_debug_field(rt, d->tuple_size);

	return type >= 400 && type <= 1024 && mp_py_debug_field(rt, d->tp_flags) == 168 && tuple >= 24 &&
	       tuple <= 64 && mp_py_debug_field(rt, d->list_size) == 40 && mp_py_debug_field(rt, d->dict_size) == 48 &&
	       mp_py_debug_field(rt, d->float_size) == 24 && mp_py_debug_field(rt, d->float_value) == 16 &&
	       mp_py_debug_field(rt, d->long_size) >= 24 && mp_py_debug_field(rt, d->long_size) <= 40;
}

/* Put the field at AT of RT's debug offsets (a struct's member, the struct's size at SIZE_AT) into *DST when
   it lies inside the struct; warn otherwise. */
static void take(uint32_t *dst, const mp_py_runtime *rt, uint32_t size_at, uint32_t at, const char *what,
		 mp_diag *diag)
{
	uint64_t size = mp_py_debug_field(rt, size_at), v = mp_py_debug_field(rt, at);

	if (size == 0 || size > (1u << 24) || v + 8 > size) {
		mp_warn(diag, "CPython's debug offsets put %s at %llu of %llu bytes: the version's table is used",
			what, (unsigned long long)v, (unsigned long long)size);
		return;
	}
	*dst = (uint32_t)v;
}

void py_heap_layout_debug(py_heap_layout *l, const mp_py_runtime *rt, mp_diag *diag)
{
	const debug_at *d = NULL, *first = NULL;
	uint64_t type_size;

	if (!rt->has_debug_offsets)
		return;
	for (size_t i = 0; i < sizeof debug_ats / sizeof debug_ats[0] && d == NULL; i++)
		if (debug_ats[i].minor == l->minor) {
			first = first != NULL ? first : &debug_ats[i];
			if (plausible(&debug_ats[i], rt))
				d = &debug_ats[i];
		}
	if (first == NULL)
		return;
	take(&l->interp_gc, rt, first->interp_size, first->interp_gc, "the interpreter's gc", diag);
	take(&l->interp_modules, rt, first->interp_size, first->interp_modules, "sys.modules", diag);
	if (d == NULL) {
		mp_warn(diag, "CPython 3.%d's debug offsets are not laid out as memprof knows them: its own table is used",
			l->minor);
		return;
	}
	take(&l->tp_name, rt, d->type_size, d->tp_name, "tp_name", diag);
	take(&l->tp_flags, rt, d->type_size, d->tp_flags, "tp_flags", diag);
	take(&l->tuple_items, rt, d->tuple_size, d->tuple_items, "a tuple's items", diag);
	take(&l->tuple_size, rt, d->tuple_size, d->tuple_obsize, "a tuple's size", diag);
	take(&l->list_items, rt, d->list_size, d->list_items, "a list's items", diag);
	take(&l->list_size, rt, d->list_size, d->list_obsize, "a list's size", diag);
	take(&l->dict_keys, rt, d->dict_size, d->dict_keys, "a dict's keys", diag);
	take(&l->dict_values, rt, d->dict_size, d->dict_values, "a dict's values", diag);
	take(&l->float_value, rt, d->float_size, d->float_value, "a float's value", diag);
	take(&l->long_size, rt, d->long_size, d->long_tag, "an int's tag", diag);
	take(&l->long_digits, rt, d->long_size, d->long_digits, "an int's digits", diag);
	take(&l->gc_collecting, rt, d->gc_size, d->gc_collecting, "the gc's collecting flag", diag);
	/* the heap type's fields follow the type object's, which the debug offsets size */
	type_size = mp_py_debug_field(rt, d->type_size);
	l->ht_cached_keys = (uint32_t)(l->ht_cached_keys - l->type_size + type_size);
	l->type_size = (uint32_t)type_size;
}
