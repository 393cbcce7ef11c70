/* mp_blocks.h - what _memory_viz.py accounts to one block: _block_extra and the
   legacy 'history' records (shared by the stats and flamegraph analyses). */
#ifndef MEMPROF_BLOCKS_H
#define MEMPROF_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_snapshot.h"

/* One element of a legacy block's 'history' list. */
typedef struct mp_history_item {
	int64_t real_size;
	mp_val frames; /* as stored (any value); MP_ABSENT when there is no 'frames' key */
} mp_history_item;

/* Where a block sits, for error messages: segments[SEG].blocks[BLOCK]. */
typedef struct mp_block_at {
	const char *analysis; /* "stats", "segments", ... */
	size_t seg, block;
} mp_block_at;

/* Number of records in B's 'history' (0 when B has none). */
size_t mp_block_history_len(const mp_snapshot *snap, const mp_block *b);

/* Read history record I of B. Fails with MP_E_TYPE where Python would raise
   (not a dict, no int 'real_size') and MP_E_RANGE for a real_size beyond int64. */
mp_err mp_block_history_get(const mp_snapshot *snap, const mp_block *b, size_t i, mp_history_item *out,
			    const mp_block_at *at, mp_diag *diag) MP_WUR;

/* _block_extra(B): the frames and size PyTorch accounts to B. With 'frames':
   those and 'requested_size'; otherwise history[0]'s, or no frames and
   'requested_size' (or 'size' without one). *FRAMES may be MP_ABSENT (= []).
   Fails where Python raises (KeyError, IndexError). */
mp_err mp_block_extra(const mp_snapshot *snap, const mp_block *b, mp_val *frames, int64_t *size,
		      const mp_block_at *at, mp_diag *diag) MP_WUR;

#endif
