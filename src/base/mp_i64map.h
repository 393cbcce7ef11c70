/* mp_i64map.h - a map from 64-bit keys to 64-bit values (open addressing, linear probing, deletion by backward
   shift), for what is keyed by address or id: live allocations in a trace, blocks of a replay. */
#ifndef MEMPROF_I64MAP_H
#define MEMPROF_I64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"

typedef struct mp_i64map {
	int64_t *keys;
	int64_t *vals;
	bool *used;
	size_t cap, n;
} mp_i64map;

/* An empty map needs no call: {0}. Free its memory. */
void mp_i64map_fini(mp_i64map *m);
/* Set KEY to VAL. MP_E_NOMEM (the map is unchanged). */
mp_err mp_i64map_put(mp_i64map *m, int64_t key, int64_t val) MP_WUR;
/* Whether KEY is there; its value in *VAL when so (VAL may be NULL). */
bool mp_i64map_get(const mp_i64map *m, int64_t key, int64_t *val);
/* Remove KEY (nothing when it is not there). */
void mp_i64map_del(mp_i64map *m, int64_t key);

#endif
