/* mp_value.h - generic Python-like values (None, bool, int, float, str, bytes, list, tuple, dict):
   the common ground of the pickle and JSON readers and writers, and the home of unknown keys. */
#ifndef MEMPROF_VALUE_H
#define MEMPROF_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"

/* A value is a 64-bit handle: a 4-bit type tag and a 60-bit payload. Small ints
   live in the payload; everything else is an index into an mp_heap that owns it.
   Handle 0 (MP_ABSENT) means "no value" (a missing key), never a Python object.

   Strings, bytes and big ints are interned, so two equal strings have equal
   handles. Containers are built open, then frozen when complete; a frozen
   container of modest size is hash-consed: freezing one equal to an existing
   frozen container returns the existing handle. So equal frame dicts and equal
   frame lists share one handle, which is how memprof interns frames. Frozen
   containers are immutable. */
typedef uint64_t mp_val;

enum mp_vtype {
	MP_T_ABSENT = 0,
	MP_T_NONE,
	MP_T_BOOL,
	MP_T_INT,    /* fits in 60 bits, inline */
	MP_T_BIGINT, /* any other int: little-endian two's complement bytes */
	MP_T_FLOAT,
	MP_T_STR,    /* UTF-8 (may hold surrogate-escaped bytes from odd pickles) */
	MP_T_BYTES,
	MP_T_LIST,
	MP_T_TUPLE,
	MP_T_DICT
};

#define MP_ABSENT ((mp_val)0)
#define MP_NONE ((mp_val)MP_T_NONE)
#define MP_FALSE ((mp_val)MP_T_BOOL)
#define MP_TRUE ((mp_val)(((uint64_t)1 << 4) | MP_T_BOOL))
/* Stands in for a value a reader was asked not to build (see mp_pickle_read's
   skip keys). Its type reads as None; writers refuse it. */
#define MP_SKIPPED ((mp_val)(((uint64_t)2 << 4) | MP_T_NONE))

#define MP_SMALL_INT_MIN (-((int64_t)1 << 59))
#define MP_SMALL_INT_MAX (((int64_t)1 << 59) - 1)

static inline enum mp_vtype mp_val_type(mp_val v)
{
	return (enum mp_vtype)(v & 15);
}

/* The int of a MP_T_INT handle (arithmetic shift keeps the sign). */
static inline int64_t mp_val_small_int(mp_val v)
{
	return (int64_t)v >> 4;
}

static inline bool mp_fits_small_int(int64_t i)
{
	return i >= MP_SMALL_INT_MIN && i <= MP_SMALL_INT_MAX;
}

/* A MP_T_INT handle for I; only valid when mp_fits_small_int(I). */
static inline mp_val mp_val_from_small_int(int64_t i)
{
	return ((uint64_t)i << 4) | MP_T_INT;
}

static inline mp_val mp_val_bool(bool b)
{
	return b ? MP_TRUE : MP_FALSE;
}

static inline bool mp_val_is_container(mp_val v)
{
	enum mp_vtype t = mp_val_type(v);

	return t == MP_T_LIST || t == MP_T_TUPLE || t == MP_T_DICT;
}

typedef struct mp_heap mp_heap;

/* Keys memprof knows, interned once per heap so that lookups compare handles. */
#define MP_KNOWN_KEYS                                                        \
	K(segments) K(device_traces) K(allocator_settings) K(traces)          \
	K(device) K(address) K(total_size) K(allocated_size) K(active_size)   \
	K(requested_size) K(stream) K(segment_type) K(segment_pool_id)        \
	K(is_expandable) K(frames) K(blocks) K(size) K(state) K(history)      \
	K(action) K(addr) K(time_us) K(device_free) K(compile_context)       \
	K(user_metadata) K(filename) K(line) K(name) K(real_size)            \
	K(active_allocated) K(active_pending_free) K(inactive)               \
	K(large) K(small) K(alloc) K(free_requested) K(free_completed)       \
	K(segment_alloc) K(segment_free) K(segment_map) K(segment_unmap)     \
	K(snapshot) K(oom) K(annotate) K(user_defined) K(category)           \
	K(external_annotations) K(pool_id) K(host_segments) K(host_traces)

typedef struct mp_keys {
#define K(name) mp_val name;
	MP_KNOWN_KEYS
#undef K
} mp_keys;

/* Create an empty heap (with the known keys interned). Returns NULL when out of memory. */
mp_heap *mp_heap_new(void);

/* Free HEAP and everything in it. HEAP may be NULL. */
void mp_heap_free(mp_heap *heap);

/* The known-key handles of HEAP. This function can't fail. */
const mp_keys *mp_heap_keys(const mp_heap *heap);

/* Bytes of memory HEAP holds (for limits and benchmarks). */
size_t mp_heap_footprint(const mp_heap *heap);

/* ---- Making atoms. Each returns MP_OK and the handle in *OUT, or MP_E_NOMEM / MP_E_LIMIT. */
mp_err mp_heap_str(mp_heap *heap, const char *s, size_t len, mp_val *out) MP_WUR;
mp_err mp_heap_bytes(mp_heap *heap, const void *b, size_t len, mp_val *out) MP_WUR;
/* A str from bytes not checked yet: MP_E_CORRUPT unless they are UTF-8 (lone
   surrogates allowed, as pickle writes them). Only a str not in HEAP yet is
   checked: one found has the same bytes, and every str made from input was
   checked (mp_heap_str is for text already known to be UTF-8). */
mp_err mp_heap_str_utf8(mp_heap *heap, const char *s, size_t len, mp_val *out) MP_WUR;
mp_err mp_heap_int(mp_heap *heap, int64_t i, mp_val *out) MP_WUR;
/* An int from LEN little-endian two's-complement bytes (pickle's LONG1/LONG4 form).
   Normalised: the result is a MP_T_INT handle whenever the value fits. */
mp_err mp_heap_int_le(mp_heap *heap, const unsigned char *le, size_t len, mp_val *out) MP_WUR;
mp_err mp_heap_float(mp_heap *heap, double d, mp_val *out) MP_WUR;

/* ---- Reading atoms. */
/* Bytes of a STR, BYTES or BIGINT handle (BIGINT: minimal little-endian two's complement),
   NUL-terminated; length in *LEN. Returns NULL for other types. */
const char *mp_heap_atom(const mp_heap *heap, mp_val v, size_t *len);
double mp_heap_float_value(const mp_heap *heap, mp_val v);
/* Whether V is an int (small or big) whose value fits in int64; stores it in *OUT. */
bool mp_heap_get_i64(const mp_heap *heap, mp_val v, int64_t *out);

/* ---- Building containers. */
/* Open a new empty container of TYPE (MP_T_LIST, MP_T_TUPLE or MP_T_DICT). */
mp_err mp_heap_open(mp_heap *heap, enum mp_vtype type, mp_val *out) MP_WUR;
/* Append ITEM to the open LIST or TUPLE CONT. ITEM must not be open. */
mp_err mp_heap_append(mp_heap *heap, mp_val cont, mp_val item) MP_WUR;
/* Set KEY to VALUE in the open DICT (a repeated key keeps its first position and
   takes the last value, as Python does). KEY and VALUE must not be open. */
mp_err mp_heap_setitem(mp_heap *heap, mp_val dict, mp_val key, mp_val value) MP_WUR;
/* Freeze CONT and store its canonical handle in *OUT (CONT itself, or an equal
   frozen container). Freezing a frozen container just returns its canonical
   handle. After a freeze that returned another handle, CONT stays valid (it
   resolves to *OUT) until mp_heap_release(CONT). */
mp_err mp_heap_freeze(mp_heap *heap, mp_val cont, mp_val *out) MP_WUR;
/* Give back the record of a container that froze into another handle, when
   the caller holds the only reference to CONT. Other handles are ignored. */
void mp_heap_release(mp_heap *heap, mp_val cont);
/* Whether container CONT is still open for additions (mp_heap_is_open takes any value). */
bool mp_heap_cont_is_open(const mp_heap *heap, mp_val cont);
/* Build a frozen container at once from N items (a DICT takes N key/value pairs, 2N handles). */
mp_err mp_heap_make(mp_heap *heap, enum mp_vtype type, const mp_val *items, size_t n, mp_val *out) MP_WUR;

/* ---- Reading containers (frozen ones; an open one reads as its current items). */
/* Follow a container handle that froze into another to the canonical one
   (mp_heap_resolve takes any value). */
mp_val mp_heap_cont_resolve(const mp_heap *heap, mp_val cont);
/* Number of items (of key/value pairs for a dict); 0 for non-containers. */
size_t mp_heap_len(const mp_heap *heap, mp_val v);
/* The items (a dict: keys and values interleaved, 2*len handles). */
const mp_val *mp_heap_items(const mp_heap *heap, mp_val v);
/* The value under KEY in DICT, or MP_ABSENT. KEY compares by handle, which is
   exact for str keys (interned) and small ints. */
mp_val mp_heap_dict_get(const mp_heap *heap, mp_val dict, mp_val key);

/* Whether tuple V may be a dict key in Python: no list or dict in it, at any
   depth of tuples (mp_heap_hashable takes any value). Uses no recursion. This
   function can't fail (it answers false when out of memory). */
bool mp_heap_tuple_hashable(const mp_heap *heap, mp_val v);

/* Python-style equality of two values (containers compared deeply, ints by
   value, 1 == 1.0 as in Python). For tests and compare. */
bool mp_heap_equal(const mp_heap *heap, mp_val a, mp_val b);

/* The same three for any value, answering at once for the atoms that most
   calls get (these run per pickle opcode). */
static inline bool mp_heap_is_open(const mp_heap *heap, mp_val v)
{
	return mp_val_is_container(v) && mp_heap_cont_is_open(heap, v);
}

static inline mp_val mp_heap_resolve(const mp_heap *heap, mp_val v)
{
	return mp_val_is_container(v) ? mp_heap_cont_resolve(heap, v) : v;
}

/* Whether V may be a dict key in Python (CPython's unpickler refuses others). */
static inline bool mp_heap_hashable(const mp_heap *heap, mp_val v)
{
	if (mp_val_type(v) == MP_T_TUPLE)
		return mp_heap_tuple_hashable(heap, v);
	return !mp_val_is_container(v);
}

#endif
