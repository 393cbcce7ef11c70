/* mp_block_rows.h - a snapshot's blocks as rows, for the analyses built on src/analysis (the
   categories, the timeline) as for its own block commands: collecting the blocks a filter keeps,
   their frames, and table rows in the block commands' columns. */
#ifndef MEMPROF_BLOCK_ROWS_H
#define MEMPROF_BLOCK_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_block_query.h" /* enum mp_block_states */
#include "mp_err.h"
#include "mp_format.h"
#include "mp_out.h"
#include "mp_snapshot.h"

/* A block of a snapshot with what sorting and filtering look at. */
typedef struct mp_block_ref {
	int64_t device;  /* the segment's (-1 when it has none) */
	int64_t address;
	int64_t size;
	unsigned state;  /* one enum mp_block_states bit */
	size_t seg;      /* index in snap->segments */
	size_t block;    /* index in snap->blocks */
} mp_block_ref;

/* Which blocks mp_block_refs_collect keeps. */
typedef bool (*mp_block_keep_fn)(const mp_snapshot *snap, const mp_block_ref *r, const void *ctx);

/* Every block of SNAP that KEEP(SNAP, ref, CTX) keeps, in list order, into
   *OUT (malloc'd, free() it; NULL when none) and *N. MP_E_NOMEM with DIAG
   naming ANALYSIS. */
mp_err mp_block_refs_collect(const mp_snapshot *snap, mp_block_keep_fn keep, const void *ctx, mp_block_ref **out,
			     size_t *n, const char *analysis, mp_diag *diag) MP_WUR;

/* B's frames: its 'frames', or a legacy block's first 'history' record's;
   MP_ABSENT when there are none. */
mp_val mp_block_frames(const mp_snapshot *snap, const mp_block *b);

/* Write frame I of FRAMES as "name" SEP "file:line", or "?" when it is not a frame dict. */
void mp_block_put_frame(const mp_snapshot *snap, mp_val frames, size_t i, const char *sep, mp_out *out);

/* Table rows of left-aligned columns: each cell is written into CELL, then
   moved to OUT padded to its column's width (OUT may drain into a file at any
   time, so its length cannot measure a cell). */
typedef struct mp_block_table {
	const mp_snapshot *snap;
	enum mp_units units;
	mp_out *out;
	mp_out cell;
} mp_block_table;

void mp_block_table_init(mp_block_table *t, const mp_snapshot *snap, enum mp_units u, mp_out *out);
void mp_block_table_free(mp_block_table *t);

/* Move the cell to OUT, padded with blanks to WIDTH, then two blanks. */
void mp_block_table_end_cell(mp_block_table *t, int width);

/* A header cell TEXT of WIDTH. */
void mp_block_table_head(mp_block_table *t, const char *text, int width);

/* The header cells over mp_block_table_cells. */
void mp_block_table_heads(mp_block_table *t, bool with_requested);

/* The common cells of a block's row: address, size, state, device and
   stream, in the block commands' column widths; requested size follows size when WITH_REQUESTED. */
void mp_block_table_cells(mp_block_table *t, const mp_block_ref *r, bool with_requested);

/* The last cell: R's innermost frame "name file:line", "-" without frames; then the newline. */
void mp_block_table_frame(mp_block_table *t, const mp_block_ref *r);

/* OUT's sticky error as the analysis's result (MP_OK when none). */
mp_err mp_block_out_status(const mp_out *out, const char *analysis, mp_diag *diag) MP_WUR;

#endif
