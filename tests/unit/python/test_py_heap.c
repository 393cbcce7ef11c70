/* test_py_heap.c - the Python heap reader on hand-made memory (the callback target, CPython 3.13's layout, and
   3.10's for its keys table): a sound heap read whole, then damage: an ob_type that is no type, a metaclass
   that is its own type, a GC list that loops back, a link into nothing, more objects than allowed, a dict
   whose table claims 2^40 slots or more entries than slots, split values that name entries past the keys,
   a list of 2^40 items, an int of a bad sign or too many digits, a type whose MRO tuple is huge. Every one
   bounded, with an error or a warning and what could be read. Live interpreters: tests/python/heap.sh. */
#include <string.h>

#include "mp_py_heap.h"

#define BASE 0x10000u
#define MEM_IMAGE_BASE BASE
#define MEM_IMAGE_SIZE 0x10000
#include "mem_image.h"

/* Where things are in MEM. */
enum {
	T_TYPE = 0x10000, T_OBJECT = 0x10200, T_STR = 0x10400, T_LONG = 0x10600, T_FLOAT = 0x10800,
	T_DICT = 0x10a00, T_LIST = 0x10c00, T_TUPLE = 0x10e00, T_MODULE = 0x11000, T_NODE = 0x11200,
	T_SELFMETA = 0x11400, NONE = 0x11600,
	INTERP = 0x12000, GC = INTERP + 7400,
	OBJS = 0x14000,   /* GC heads, 0x100 apart */
	STRS = 0x16000,   /* strs, 0x40 apart */
	DICTS = 0x17000,
	KEYS = 0x18000,
	LISTS = 0x19000,
	FREE = 0x1a000,
};

static const mp_py_heap_syms syms = {
	.type = T_TYPE, .object = T_OBJECT, .str = T_STR, .long_ = T_LONG, .float_ = T_FLOAT,
	.dict = T_DICT, .list = T_LIST, .tuple = T_TUPLE, .module = T_MODULE, .none = NONE,
};

static mp_py_interp py;
static mp_py_runtime rt;

/* A type object at ADDR named NAME (its text just after the 416 bytes of the type), of META, based on BASE. */
static void make_type(uint64_t addr, const char *name, uint64_t flags, uint64_t base, uint64_t meta)
{
	put64(addr + 8, meta);
	put64(addr + 24, addr + 0x1a0);
	strcpy((char *)mem + (addr - BASE) + 0x1a0, name);
	put64(addr + 32, 16);
	put64(addr + 168, flags | (1u << 12));
	put64(addr + 256, base);
}

/* A compact ASCII str at ADDR. */
static void make_str(uint64_t addr, const char *s)
{
	put64(addr + 8, T_STR);
	put64(addr + 16, strlen(s));
	mem[addr - BASE + 32] = 1 << 2 | 1 << 5 | 1 << 6;
	memcpy(mem + (addr - BASE) + 40, s, strlen(s));
}

/* Link the objects whose GC heads are HEADS[0..N) into the list headed at HEAD, soundly. */
static void make_list(uint64_t head, const uint64_t *heads, size_t n)
{
	uint64_t last = head;

	for (size_t i = 0; i < n; i++) {
		put64(last, heads[i]);
		put64(heads[i] + 8, last);
		last = heads[i];
	}
	put64(last, head);
	put64(head + 8, last);
}

/* A fresh image: the builtin types, None, one interpreter with empty lists. */
static void make_heap(void)
{
	memset(mem, 0, sizeof mem);
	make_type(T_TYPE, "type", 1ull << 31, T_OBJECT, T_TYPE);
	make_type(T_OBJECT, "object", 0, 0, T_TYPE);
	make_type(T_STR, "str", 1ull << 28, T_OBJECT, T_TYPE);
	make_type(T_LONG, "int", 1ull << 24, T_OBJECT, T_TYPE);
	make_type(T_FLOAT, "float", 0, T_OBJECT, T_TYPE);
	make_type(T_DICT, "dict", 1ull << 29, T_OBJECT, T_TYPE);
	make_type(T_LIST, "list", 1ull << 25, T_OBJECT, T_TYPE);
	make_type(T_TUPLE, "tuple", 1ull << 26, T_OBJECT, T_TYPE);
	make_type(T_MODULE, "module", 0, T_OBJECT, T_TYPE);
	make_type(T_NODE, "mod.sub.Node", 0, T_OBJECT, T_TYPE);
	put64(NONE + 8, T_OBJECT);
	for (int k = 0; k < 3; k++)
		make_list(GC + 24 + 24 * k, NULL, 0);
	make_list(GC + 104, NULL, 0);
	put64(GC + 96, GC + 24);
}

static mp_py_heap *open_heap(mp_target *t, uint64_t max)
{
	mp_py_heap_opts opts = { .max_objects = max, .syms = &syms };
	mp_py_heap *h = NULL;
	mp_diag diag = { 0 };

	mp_target_flush(t);
	CU_ASSERT_EQUAL_FATAL(mp_py_heap_open(t, &py, &rt, &opts, &h, &diag), MP_OK);
	return h;
}

static void setup(int minor)
{
	memset(&py, 0, sizeof py);
	memset(&rt, 0, sizeof rt);
	py.major = 3;
	py.minor = minor;
	py.layout = mp_py_layout_for(3, minor);
	strcpy(py.path, "hand-made libpython");
	rt.interps[0] = rt.main_interp = INTERP;
	rt.ninterps = 1;
}

/* ---- the walk's callback: what it was given */
typedef struct seen {
	uint64_t objs[64], types[64];
	size_t n;
	size_t stop_after; /* 0: never */
} seen;

static bool seen_cb(void *ctx, uint64_t obj, uint64_t type)
{
	seen *s = ctx;

	if (s->n < 64) {
		s->objs[s->n] = obj;
		s->types[s->n] = type;
	}
	s->n++;
	return s->stop_after == 0 || s->n < s->stop_after;
}

static void test_walk(void)
{
	const uint64_t heads[] = { OBJS, OBJS + 0x100, OBJS + 0x200 }, old[] = { OBJS + 0x300 };
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	mp_py_heap *h;
	seen s = { 0 };

	setup(13);
	make_heap();
	make_list(GC + 24, heads, 3);
	make_list(GC + 72, old, 1);
	for (int i = 0; i < 4; i++)
		put64(OBJS + 0x100 * i + 16 + 8, T_NODE);
	put64(OBJS + 0x100 + 8, heads[0] + 2); /* flag bits in a back link are no damage */
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_heap_each(h, seen_cb, &s, &diag), MP_OK);
	CU_ASSERT_EQUAL(diag.nwarn, 0);
	CU_ASSERT_EQUAL(s.n, 4);
	CU_ASSERT_EQUAL(mp_py_heap_count(h), 4);
	CU_ASSERT_EQUAL(s.objs[0], OBJS + 16);
	CU_ASSERT_EQUAL(s.objs[3], OBJS + 0x300 + 16);
	CU_ASSERT_EQUAL(s.types[2], T_NODE);
	/* the callback stops it */
	memset(&s, 0, sizeof s);
	s.stop_after = 2;
	CU_ASSERT_EQUAL(mp_py_heap_each(h, seen_cb, &s, &diag), MP_OK);
	CU_ASSERT_EQUAL(s.n, 2);
	mp_py_heap_close(h);
	/* more objects than allowed: a warning, and the walk stops there */
	h = open_heap(t, 3);
	memset(&s, 0, sizeof s);
	mp_diag_reset(&diag);
	CU_ASSERT_EQUAL(mp_py_heap_each(h, seen_cb, &s, &diag), MP_OK);
	CU_ASSERT_EQUAL(s.n, 3);
	CU_ASSERT_EQUAL(diag.nwarn, 1);
	mp_py_heap_close(h);
	mp_target_close(t);
}

static void test_walk_damage(void)
{
	const uint64_t heads[] = { OBJS, OBJS + 0x100, OBJS + 0x200 };
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	mp_py_heap *h;
	seen s = { 0 };

	setup(13);
	make_heap();
	make_list(GC + 24, heads, 3);
	/* the last links back to the second: a cycle that never reaches the head */
	put64(OBJS + 0x200, OBJS + 0x100);
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_heap_each(h, seen_cb, &s, &diag), MP_OK);
	CU_ASSERT_EQUAL(s.n, 3);
	CU_ASSERT_EQUAL(diag.nwarn, 1);
	mp_py_heap_close(h);
	/* a link into nothing */
	put64(OBJS + 0x100, 0xdead0000);
	h = open_heap(t, 0);
	memset(&s, 0, sizeof s);
	mp_diag_reset(&diag);
	CU_ASSERT_EQUAL(mp_py_heap_each(h, seen_cb, &s, &diag), MP_OK);
	CU_ASSERT_EQUAL(s.n, 2);
	CU_ASSERT_EQUAL(diag.nwarn, 1);
	mp_py_heap_close(h);
	/* a link to a sound-looking object whose back link names another */
	put64(OBJS + 0x100, OBJS + 0x300);
	put64(OBJS + 0x300 + 8, OBJS);
	h = open_heap(t, 0);
	memset(&s, 0, sizeof s);
	mp_diag_reset(&diag);
	CU_ASSERT_EQUAL(mp_py_heap_each(h, seen_cb, &s, &diag), MP_OK);
	CU_ASSERT_EQUAL(s.n, 2);
	CU_ASSERT_EQUAL(diag.nwarn, 1);
	mp_py_heap_close(h);
	/* no list can be read at all: an error */
	rt.interps[0] = 0xdead0000;
	h = open_heap(t, 0);
	memset(&s, 0, sizeof s);
	mp_diag_reset(&diag);
	CU_ASSERT_EQUAL(mp_py_heap_each(h, seen_cb, &s, &diag), MP_E_CORRUPT);
	CU_ASSERT_EQUAL(s.n, 0);
	mp_py_heap_close(h);
	mp_target_close(t);
}

static void test_types(void)
{
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	const mp_py_type *ty;
	mp_py_heap *h;
	uint64_t mro = LISTS + 0x800;

	setup(13);
	make_heap();
	h = open_heap(t, 0);
	ty = mp_py_heap_type(h, T_NODE, &diag);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ty);
	CU_ASSERT_STRING_EQUAL(ty->name, "Node");
	CU_ASSERT_STRING_EQUAL(ty->module, "mod.sub");
	CU_ASSERT_EQUAL(ty->nmro, 2); /* no tp_mro: the tp_base chain */
	CU_ASSERT(mp_py_type_is(h, ty, "builtins", "object"));
	CU_ASSERT(!mp_py_type_is(h, ty, "builtins", "dict"));
	CU_ASSERT_PTR_EQUAL(mp_py_heap_type(h, T_NODE, NULL), ty); /* cached */
	CU_ASSERT_STRING_EQUAL(mp_py_heap_type(h, T_DICT, NULL)->module, "builtins");
	/* an ob_type that points at an int: no type */
	put64(STRS + 8, T_LONG);
	CU_ASSERT_PTR_NULL(mp_py_heap_type(h, STRS, &diag));
	CU_ASSERT(diag.msg[0] != '\0');
	/* into nothing */
	CU_ASSERT_PTR_NULL(mp_py_heap_type(h, 0xdead0000, NULL));
	CU_ASSERT_PTR_NULL(mp_py_heap_type(h, 0, NULL));
	/* a "type" whose type is itself but not `type`: refused, no endless descent */
	make_type(T_SELFMETA, "Loop", 1ull << 31, T_OBJECT, T_SELFMETA);
	CU_ASSERT_PTR_NULL(mp_py_heap_type(h, T_SELFMETA, NULL));
	mp_py_heap_close(h);
	/* a type's name pointer into nothing */
	put64(T_NODE + 24, 0xdead0000);
	h = open_heap(t, 0);
	CU_ASSERT_PTR_NULL(mp_py_heap_type(h, T_NODE, NULL));
	mp_py_heap_close(h);
	/* an MRO tuple of 2^40 items: the tp_base chain instead */
	make_type(T_NODE, "mod.sub.Node", 0, T_OBJECT, T_TYPE);
	put64(T_NODE + 344, mro);
	put64(mro + 8, T_TUPLE);
	put64(mro + 16, 1ull << 40);
	h = open_heap(t, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ty = mp_py_heap_type(h, T_NODE, NULL));
	CU_ASSERT_EQUAL(ty->nmro, 2);
	/* and a sound one: (Node, object) */
	mp_py_heap_close(h);
	put64(mro + 16, 2);
	put64(mro + 24, T_NODE);
	put64(mro + 32, T_OBJECT);
	h = open_heap(t, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ty = mp_py_heap_type(h, T_NODE, NULL));
	CU_ASSERT_EQUAL(ty->nmro, 2);
	CU_ASSERT_EQUAL(ty->mro[1], T_OBJECT);
	mp_py_heap_close(h);
	mp_target_close(t);
}

/* A 3.13 combined str-keys table at KEYS with N entries (keys STRS + 0x40 * i, values 100 + i). */
static void make_dict(uint64_t dict, uint64_t keys, unsigned log2, unsigned n)
{
	uint64_t entries = keys + 32 + (1u << log2);

	put64(dict + 8, T_DICT);
	put64(dict + 16, n);
	put64(dict + 32, keys);
	put64(dict + 40, 0);
	mem[keys - BASE + 8] = (unsigned char)log2;
	mem[keys - BASE + 9] = (unsigned char)log2;
	mem[keys - BASE + 10] = 1;
	put64(keys + 24, n);
	for (unsigned i = 0; i < n; i++) {
		put64(entries + 16 * i, STRS + 0x40 * i);
		put64(entries + 16 * i + 8, 100 + i);
	}
}

typedef struct dict_items {
	uint64_t keys[16], values[16];
	size_t n;
} dict_items;

static bool items_cb(void *ctx, uint64_t key, uint64_t value)
{
	dict_items *it = ctx;

	if (it->n < 16) {
		it->keys[it->n] = key;
		it->values[it->n] = value;
	}
	it->n++;
	return true;
}

static void test_dicts(void)
{
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	mp_py_heap *h;
	dict_items it = { 0 };
	uint64_t v, values = DICTS + 0x400;

	setup(13);
	make_heap();
	make_str(STRS, "alpha");
	make_str(STRS + 0x40, "beta");
	make_str(STRS + 0x80, "gamma");
	make_dict(DICTS, KEYS, 3, 3);
	put64(KEYS + 32 + 8 + 16 + 8, 0); /* beta deleted: no value */
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_dict_each(h, DICTS, items_cb, &it, &diag), MP_OK);
	CU_ASSERT_EQUAL(it.n, 2);
	CU_ASSERT_EQUAL(it.values[1], 102);
	CU_ASSERT_EQUAL(mp_py_dict_get_str(h, DICTS, "gamma", &v, &diag), MP_OK);
	CU_ASSERT_EQUAL(v, 102);
	CU_ASSERT_EQUAL(mp_py_dict_get_str(h, DICTS, "beta", &v, &diag), MP_E_NOTFOUND);
	/* no dict */
	CU_ASSERT_EQUAL(mp_py_dict_each(h, STRS, items_cb, &it, NULL), MP_E_TYPE);
	mp_py_heap_close(h);
	/* a table of 2^40 slots */
	mem[KEYS - BASE + 8] = 40;
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_dict_each(h, DICTS, items_cb, &it, &diag), MP_E_LIMIT);
	mp_py_heap_close(h);
	/* more entries than two thirds of the slots */
	make_dict(DICTS, KEYS, 3, 3);
	put64(KEYS + 24, 1000);
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_dict_each(h, DICTS, items_cb, &it, &diag), MP_E_CORRUPT);
	mp_py_heap_close(h);
	/* index bytes that do not fit the slots */
	make_dict(DICTS, KEYS, 3, 3);
	mem[KEYS - BASE + 9] = 30;
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_dict_each(h, DICTS, items_cb, &it, &diag), MP_E_CORRUPT);
	mp_py_heap_close(h);
	/* split: values {capacity 4, size 2, order 2 0}; then an order that names entry 7 */
	make_dict(DICTS, KEYS, 3, 3);
	put64(DICTS + 40, values);
	mem[values - BASE] = 4;
	mem[values - BASE + 1] = 2;
	put64(values + 8, 500);
	put64(values + 24, 502);
	mem[values - BASE + 8 + 32] = 2;
	mem[values - BASE + 8 + 33] = 0;
	h = open_heap(t, 0);
	memset(&it, 0, sizeof it);
	CU_ASSERT_EQUAL(mp_py_dict_each(h, DICTS, items_cb, &it, &diag), MP_OK);
	CU_ASSERT_EQUAL(it.n, 2);
	CU_ASSERT_EQUAL(it.keys[0], STRS + 0x80);
	CU_ASSERT_EQUAL(it.values[0], 502);
	CU_ASSERT_EQUAL(it.values[1], 500);
	mp_py_heap_close(h);
	mem[values - BASE + 8 + 32] = 7;
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_dict_each(h, DICTS, items_cb, &it, &diag), MP_E_CORRUPT);
	mp_py_heap_close(h);
	/* 3.10's table: dk_size 2^40 */
	setup(10);
	make_dict(DICTS, KEYS, 3, 0);
	put64(KEYS + 8, 1ull << 40);
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_dict_each(h, DICTS, items_cb, &it, &diag), MP_E_LIMIT);
	mp_py_heap_close(h);
	put64(KEYS + 8, 12); /* not a power of two */
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_dict_each(h, DICTS, items_cb, &it, &diag), MP_E_CORRUPT);
	mp_py_heap_close(h);
	mp_target_close(t);
}

static void test_attrs(void)
{
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	mp_py_heap *h;
	uint64_t obj = OBJS + 0x100 + 16, v, keys = KEYS + 0x800;

	setup(13);
	make_heap();
	make_str(STRS, "alpha");
	make_str(STRS + 0x40, "beta");
	/* a managed dict 24 bytes before the object */
	make_type(T_NODE, "mod.Node", MP_PY_TPFLAGS_MANAGED_DICT | MP_PY_TPFLAGS_HEAPTYPE, T_OBJECT, T_TYPE);
	put64(obj + 8, T_NODE);
	make_dict(DICTS, KEYS, 3, 2);
	put64(obj - 24, DICTS);
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_attr(h, obj, "beta", &v, &diag), MP_OK);
	CU_ASSERT_EQUAL(v, 101);
	CU_ASSERT_EQUAL(mp_py_attr(h, obj, "gamma", &v, &diag), MP_E_NOTFOUND);
	mp_py_heap_close(h);
	/* no dict yet: inline values after the object, named by the type's shared keys */
	make_type(T_NODE, "mod.Node", MP_PY_TPFLAGS_MANAGED_DICT | MP_PY_TPFLAGS_HEAPTYPE | MP_PY_TPFLAGS_INLINE_VALUES,
		  T_OBJECT, T_TYPE);
	put64(T_NODE + 880, keys);
	make_dict(DICTS + 0x100, keys, 3, 2);
	mem[keys - BASE + 10] = 2; /* split */
	put64(obj - 24, 0);
	mem[obj - BASE + 16] = 2;     /* capacity */
	mem[obj - BASE + 17] = 1;     /* size */
	mem[obj - BASE + 19] = 1;     /* valid */
	put64(obj + 16 + 8, 700);
	put64(obj + 16 + 16, 701);
	mem[obj - BASE + 16 + 8 + 16] = 1; /* only entry 1 (beta) */
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_attr(h, obj, "beta", &v, &diag), MP_OK);
	CU_ASSERT_EQUAL(v, 701);
	CU_ASSERT_EQUAL(mp_py_attr(h, obj, "alpha", &v, &diag), MP_E_NOTFOUND);
	mp_py_heap_close(h);
	/* values whose size passes their capacity */
	mem[obj - BASE + 17] = 9;
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_attr(h, obj, "beta", &v, &diag), MP_E_CORRUPT);
	mp_py_heap_close(h);
	/* an object whose type is no type */
	put64(obj + 8, STRS);
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_attr(h, obj, "beta", &v, &diag), MP_E_TYPE);
	mp_py_heap_close(h);
	mp_target_close(t);
}

static void test_values(void)
{
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	mp_py_heap *h;
	uint64_t *items = NULL, list = LISTS, obj = LISTS + 0x100;
	size_t n = 7;
	int64_t v;
	double d;
	char *s;

	setup(13);
	make_heap();
	h = open_heap(t, 0);
	/* a list of 2^40 items: refused before anything is allocated */
	put64(list + 8, T_LIST);
	put64(list + 16, 1ull << 40);
	put64(list + 24, LISTS + 0x400);
	CU_ASSERT_EQUAL(mp_py_seq_items(h, list, &items, &n, 1u << 20, &diag), MP_E_LIMIT);
	CU_ASSERT_PTR_NULL(items);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(mp_py_seq_items(h, list, &items, &n, SIZE_MAX, &diag), MP_E_CORRUPT);
	CU_ASSERT_PTR_NULL(items);
	put64(list + 16, (uint64_t)-3);
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_py_seq_items(h, list, &items, &n, 100, &diag), MP_E_CORRUPT);
	put64(list + 16, 2);
	put64(LISTS + 0x400, 11);
	put64(LISTS + 0x408, 12);
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_py_seq_items(h, list, &items, &n, 100, &diag), MP_OK);
	CU_ASSERT(n == 2 && items != NULL && items[1] == 12);
	free(items);
	/* ints: 3.12's tag {digits << 3 | sign} */
	put64(obj + 8, T_LONG);
	put64(obj + 16, 2 << 3 | 2);
	put32(obj + 24, 5);
	put32(obj + 28, 1);
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_py_long(h, obj, &v, &diag), MP_OK);
	CU_ASSERT_EQUAL(v, -((1ll << 30) + 5));
	put64(obj + 16, 2 << 3 | 3); /* no such sign */
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_py_long(h, obj, &v, &diag), MP_E_CORRUPT);
	put64(obj + 16, 1000 << 3);  /* a thousand digits */
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_py_long(h, obj, &v, &diag), MP_E_RANGE);
	put64(obj + 16, 1 << 3);
	put32(obj + 24, 1u << 31);   /* a digit of 32 bits */
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_py_long(h, obj, &v, &diag), MP_E_CORRUPT);
	CU_ASSERT_EQUAL(mp_py_float(h, obj, &d, &diag), MP_E_TYPE);
	CU_ASSERT_EQUAL(mp_py_str(h, obj, &s, &diag), MP_E_TYPE);
	CU_ASSERT(mp_py_is_none(h, NONE) && !mp_py_is_none(h, obj));
	mp_py_heap_close(h);
	mp_target_close(t);
}

/* RT's debug offsets: FIELD at AT is V. */
static void debug_put(size_t at, uint64_t v)
{
	memcpy(rt.debug + at, &v, sizeof v);
}

/* 3.14 reads its interpreter's offsets and its objects' from _Py_DebugOffsets (here in the shape of a 3.14
   pre-release: its tuple's items at 32), and keeps three generations and the permanent one at 96. */
static void test_debug_offsets(void)
{
	const uint64_t heads[] = { OBJS }, old[] = { OBJS + 0x100 };
	uint64_t tuple = LISTS, *items = NULL;
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	mp_py_heap *h;
	seen s = { 0 };
	size_t n;

	setup(14);
	make_heap();
	make_list(GC + 96, NULL, 0);
	make_list(GC + 24, heads, 1);
	make_list(GC + 72, old, 1);
	put64(tuple + 8, T_TUPLE);
	put64(tuple + 16, 1);
	put64(tuple + 24, (uint64_t)-1); /* its cached hash */
	put64(tuple + 32, 77);
	/* without debug offsets 3.14 does not know where its GC state is */
	h = open_heap(t, 0);
	CU_ASSERT_EQUAL(mp_py_heap_each(h, seen_cb, &s, &diag), MP_E_UNSUPPORTED);
	mp_py_heap_close(h);
	rt.has_debug_offsets = true;
	rt.debug_len = 1024;
	debug_put(48, 200000);    /* interpreter: size, ... gc, sys.modules */
	debug_put(88, 7400);
	debug_put(96, 7656);
	debug_put(384, 416);      /* type: size, tp_name, tp_repr, tp_flags */
	debug_put(392, 24);
	debug_put(408, 168);
	debug_put(416, 40);       /* tuple: size, ob_item, ob_size */
	debug_put(424, 32);
	debug_put(432, 16);
	debug_put(440, 40);       /* list */
	debug_put(448, 24);
	debug_put(456, 16);
	debug_put(496, 48);       /* dict */
	debug_put(504, 32);
	debug_put(512, 40);
	debug_put(520, 24);       /* float */
	debug_put(528, 16);
	debug_put(536, 32);       /* int */
	debug_put(544, 16);
	debug_put(552, 24);
	debug_put(616, 240);      /* gc: size, collecting */
	debug_put(624, 200);
	h = open_heap(t, 0);
	memset(&s, 0, sizeof s);
	CU_ASSERT_EQUAL(mp_py_heap_each(h, seen_cb, &s, &diag), MP_OK);
	CU_ASSERT_EQUAL(s.n, 2);
	CU_ASSERT_EQUAL(diag.nwarn, 0);
	CU_ASSERT_EQUAL(mp_py_seq_items(h, tuple, &items, &n, 10, &diag), MP_OK);
	CU_ASSERT(n == 1 && items != NULL && items[0] == 77);
	free(items);
	mp_py_heap_close(h);
	/* a table of another shape: a warning, the interpreter's first fields still taken, the objects' by table */
	debug_put(496, 4096);
	mp_diag_reset(&diag);
	h = NULL;
	CU_ASSERT_EQUAL(mp_py_heap_open(t, &py, &rt, &(mp_py_heap_opts){ .syms = &syms }, &h, &diag), MP_OK);
	CU_ASSERT_EQUAL(diag.nwarn, 1);
	memset(&s, 0, sizeof s);
	CU_ASSERT_EQUAL(mp_py_heap_each(h, seen_cb, &s, &diag), MP_OK);
	CU_ASSERT_EQUAL(s.n, 2);
	mp_py_heap_close(h);
	mp_target_close(t);
}

static void test_open(void)
{
	mp_target *t = open_mem();
	mp_py_heap_syms none = { 0 };
	mp_py_heap_opts opts = { .syms = &none };
	mp_diag diag = { 0 };
	mp_py_heap *h = (mp_py_heap *)1;

	setup(13);
	CU_ASSERT_EQUAL(mp_py_heap_open(t, &py, &rt, &opts, &h, &diag), MP_E_NOTFOUND); /* no PyType_Type */
	CU_ASSERT_PTR_NULL(h);
	setup(9);
	CU_ASSERT_EQUAL(mp_py_heap_open(t, &py, &rt, NULL, &h, &diag), MP_E_UNSUPPORTED);
	setup(13);
	rt.free_threaded = true;
	CU_ASSERT_EQUAL(mp_py_heap_open(t, &py, &rt, NULL, &h, &diag), MP_E_UNSUPPORTED);
	mp_py_heap_close(NULL);
	mp_target_close(t);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "the GC's lists walked", test_walk },
		{ "damaged GC lists", test_walk_damage },
		{ "type objects and refusals", test_types },
		{ "dicts and damaged tables", test_dicts },
		{ "instance attributes", test_attrs },
		{ "lists, ints, floats, strs, None", test_values },
		{ "3.14 by its debug offsets", test_debug_offsets },
		{ "opening", test_open },
	};

	return UNIT_RUN("py_heap", tests, NULL, NULL);
}
