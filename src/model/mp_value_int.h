/* mp_value_int.h - the value heap's representation, shared by its files (private to src/model). */
#ifndef MEMPROF_VALUE_INT_H
#define MEMPROF_VALUE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
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
	uint32_t hash;
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

/* Open addressing table of ids. A slot holds the id + 1 in its low 32 bits
   (0 = empty) and the entry's 32-bit hash in its high bits, so that probing
   and growing never touch the entries themselves (cache misses dominate). */
struct idtable {
	uint64_t *slots;
	size_t mask;
	size_t count;
};

#define SLOT(hash, id) (((uint64_t)(uint32_t)(hash) << 32) | ((uint64_t)(id) + 1))
#define SLOT_ID(slot) ((uint32_t)(slot) - 1)
#define SLOT_HASH(slot) ((uint32_t)((slot) >> 32))

struct mp_heap {
	struct arena bytes; /* atom bytes and frozen items */
	struct atom *atoms;
	size_t natoms, atoms_cap;
	struct idtable atom_index;
	double *floats;
	size_t nfloats, floats_cap;
	struct cont *conts;
	size_t nconts, conts_cap;
	uint32_t free_conts; /* head of the CONT_FREE list, +1; 0 = empty */
	struct open_items *open;
	size_t nopen, open_cap;
	uint32_t *free_open; /* stack of reusable slots in open[] */
	size_t nfree_open, free_open_cap;
	struct idtable cont_index;
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

/* Make room in T for one more entry. */
mp_err mp_value_idtable_reserve(struct idtable *t);

#endif
