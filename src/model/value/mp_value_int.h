/* mp_value_int.h - the value heap's representation, shared by its files (private to src/model). */
#ifndef MEMPROF_VALUE_INT_H
#define MEMPROF_VALUE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_table.h"
#include "mp_value.h"

/* Indexes are stored in 60-bit payloads but kept below 2^31 so that 32-bit
   tables suffice; inputs that would need more are refused (MP_E_LIMIT). */
#define MAX_INDEX ((1u << 31) - 1)
/* Containers with at most this many handles are hash-consed when frozen: that
   covers frame dicts and small tuples, the values that real snapshots repeat as
   distinct objects. Larger containers that repeat are shared by the pickle memo. */
#define HASHCONS_MAX_ITEMS 8
#define CHUNK_SIZE ((size_t)1 << 20)

enum cont_state { CONT_FREE = 0, CONT_OPEN, CONT_FROZEN, CONT_ALIAS };

struct atom {
	const char *data;
	uint32_t len;
	uint8_t type;
};

struct cont {
	uint32_t n;     /* items (dict: pairs) */
	uint8_t type;
	uint8_t state;
	union {
		uint32_t open;      /* CONT_OPEN: index into heap->open */
		uint32_t next_free; /* CONT_FREE: free-list link */
	} u;
	union {
		const mp_val *items; /* CONT_FROZEN */
		mp_val canon;        /* CONT_ALIAS */
	} d;
};

struct open_items {
	mp_val *items;
	size_t n;   /* handles in use (a dict uses two per pair) */
	size_t cap;
};

/* A chunked bump allocator: blocks never move, so pointers into them stay valid. */
struct arena {
	char **chunks;
	size_t nchunks;
	size_t used; /* in the last chunk */
	size_t cap;  /* of the last chunk */
	size_t total;
};

struct mp_heap {
	struct arena bytes; /* atom bytes and frozen items */
	struct atom *atoms;
	size_t natoms, atoms_cap;
	mp_table atom_index; /* atoms by type and bytes; ids index atoms[] */
	double *floats;
	size_t nfloats, floats_cap;
	struct cont *conts;
	size_t nconts, conts_cap;
	uint32_t free_conts; /* head of the CONT_FREE list, +1; 0 = empty */
	struct open_items *open;
	size_t nopen, open_cap;
	uint32_t *free_open; /* stack of reusable slots in open[] */
	size_t nfree_open, free_open_cap;
	mp_table cont_index; /* frozen hash-consed containers by type and items; ids index conts[] */
	mp_keys keys;
};

static inline mp_val make_handle(size_t index, enum mp_vtype type)
{
	return ((mp_val)index << 4) | type;
}

static inline size_t handle_index(mp_val v)
{
	return (size_t)(v >> 4);
}

/* SIZE bytes aligned to ALIGN from arena A; they never move. NULL when out of memory. */
void *mp_value_arena_alloc(struct arena *a, size_t size, size_t align);

#endif
