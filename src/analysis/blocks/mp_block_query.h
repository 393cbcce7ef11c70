/* mp_block_query.h - blocks by state, size, device and stream; the block at an address; what
   changed block by block between two snapshots (the debugger's block commands). */
#ifndef MEMPROF_BLOCK_QUERY_H
#define MEMPROF_BLOCK_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_format.h"
#include "mp_out.h"
#include "mp_snapshot.h"

/* A block's state as a bit, so that a filter can take several. A missing
   state, or a string PyTorch does not write, is OTHER. */
enum mp_block_states {
	MP_BS_ACTIVE_ALLOCATED = 1u << 0,
	MP_BS_ACTIVE_PENDING_FREE = 1u << 1,
	MP_BS_INACTIVE = 1u << 2,
	MP_BS_OTHER = 1u << 3,
};

/* Read comma-separated states into *OUT: full names (active_allocated,
   active_pending_free, inactive) or short ones (allocated, pending, inactive,
   active = allocated|pending, other); any case, blanks around words ignored.
   MP_E_USAGE with a one-line DIAG naming the bad word (an empty one too). */
mp_err mp_block_states_parse(const char *text, unsigned *out, mp_diag *diag) MP_WUR;

typedef struct mp_block_filter {
	int64_t device;   /* -1: every device */
	bool any_stream;  /* true: every stream, else only STREAM */
	int64_t stream;
	unsigned states;  /* enum mp_block_states bits; 0: every state */
	int64_t min_size; /* blocks of at least this size */
	size_t top;       /* 0: every match in (device, address) order; N: the N largest, largest first
			     (ties: lower address first) */
} mp_block_filter;

/* Set F to let every block through. This function can't fail. */
void mp_block_filter_init(mp_block_filter *f);

/* A table of the blocks F lets through: a header line, then one line each with
   address, size, requested size, state, device, stream, the segment's address
   and pool id, and the innermost frame "name file:line" ("-" without frames);
   last a line with the count and total size of the matches ("2 blocks,
   1.5MiB"; with TOP "showing 2 of 5 blocks, 1.5MiB of 2.0MiB"). With no match
   only that last line. Sizes in units U. *NMATCHED: how many blocks matched
   (before TOP). A segment without 'device' or 'stream' matches only filters
   that take every device or stream. */
mp_err mp_analysis_blocks(const mp_snapshot *snap, const mp_block_filter *f, enum mp_units u, mp_out *out,
			  size_t *nmatched, mp_diag *diag) MP_WUR;

/* Which segment and block hold ADDR (the first segment with ADDR in
   [address, address + total_size)): a line for the segment (address range,
   total size, device, stream, type, pool, expandable), a line for the block
   (address, offset of ADDR in it, size, requested size, state) or one saying
   no block covers ADDR, then its frames, innermost first, "  name at
   file:line" each (or a line saying none were recorded). *FOUND false, and
   nothing written, when no segment holds ADDR. */
mp_err mp_analysis_block_at(const mp_snapshot *snap, uint64_t addr, enum mp_units u, mp_out *out, bool *found,
			    mp_diag *diag) MP_WUR;

/* What changed block by block between BEFORE and AFTER. A block is "the
   same" in both when device, address, size and state match. "+ " lines: blocks
   active (allocated or pending free) in AFTER without the same block in
   BEFORE; "- " lines: blocks active in BEFORE without the same block in AFTER
   (so a state change shows as both). Each gives address, size, state, device,
   stream and innermost frame, under a header line; lines are in (device,
   address) order, at one address "-" before "+". Last, always, a totals line:
   "N allocated (SIZE), M freed (SIZE), net +SIZE". *NCHANGES: the number of
   +/- lines. */
mp_err mp_analysis_block_diff(const mp_snapshot *before, const mp_snapshot *after, enum mp_units u, mp_out *out,
			      size_t *nchanges, mp_diag *diag) MP_WUR;

#endif
