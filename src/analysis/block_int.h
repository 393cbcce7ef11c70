/* block_int.h - what the block analyses (mp_block_query.c, mp_block_where.c, mp_block_diff.c) share:
   finding blocks, naming their state and frame, and table cells (private to src/analysis). */
#ifndef MEMPROF_BLOCK_INT_H
#define MEMPROF_BLOCK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_block_query.h"

/* A block of a snapshot with what sorting and filtering look at. */
typedef struct block_ref {
	int64_t device;  /* the segment's (-1 when it has none) */
	int64_t address;
	int64_t size;
	unsigned state;  /* one enum mp_block_states bit */
	size_t seg;      /* index in snap->segments */
	size_t block;    /* index in snap->blocks */
} block_ref;

/* Which blocks block_refs_collect keeps. */
typedef bool (*block_keep_fn)(const mp_snapshot *snap, const block_ref *r, const void *ctx);

/* Every block of SNAP that KEEP(SNAP, ref, CTX) keeps, in list order, into
   *OUT (malloc'd, free() it; NULL when none) and *N. MP_E_NOMEM with DIAG
   naming ANALYSIS. */
mp_err block_refs_collect(const mp_snapshot *snap, block_keep_fn keep, const void *ctx, block_ref **out,
			  size_t *n, const char *analysis, mp_diag *diag) MP_WUR;

/* The address of B, walking a segment's blocks in order with *NEXT (start it
   at the segment's address): B's own, or for a legacy block without one, where
   the blocks before it end. Moves *NEXT past B. */
int64_t block_address(const mp_block *b, mp_i128 *next);

/* B's state as one enum mp_block_states bit. */
unsigned block_state_bit(const mp_snapshot *snap, const mp_block *b);

/* B's frames: its 'frames', or a legacy block's first 'history' record's;
   MP_ABSENT when there are none. */
mp_val block_frames(const mp_snapshot *snap, const mp_block *b);

/* Write a str field V such as a state or a segment type: the text when it is
   one plain word, else repr() (so odd input stays on one line), "-" when not PRESENT. */
void block_put_word(const mp_snapshot *snap, bool present, mp_val v, mp_out *out);

/* Write frame I of FRAMES as "name" SEP "file:line", or "?" when it is not a frame dict. */
void block_put_frame(const mp_snapshot *snap, mp_val frames, size_t i, const char *sep, mp_out *out);

/* Write "0x" and V in hex (as an unsigned 64-bit address). */
void block_put_hex(mp_out *out, int64_t v);

/* Write V in decimal when PRESENT, else "-". */
void block_put_field(mp_out *out, bool present, int64_t v);

/* Table rows of left-aligned columns: each cell is written into CELL, then
   moved to OUT padded to its column's width (OUT may drain into a file at any
   time, so its length cannot measure a cell). */
typedef struct block_table {
	const mp_snapshot *snap;
	enum mp_units units;
	mp_out *out;
	mp_out cell;
} block_table;

/* Column widths shared by the block tables. */
enum { BT_ADDRESS = 14, BT_SIZE = 9, BT_STATE = 19, BT_NUMBER = 6 };

void block_table_init(block_table *t, const mp_snapshot *snap, enum mp_units u, mp_out *out);
void block_table_free(block_table *t);

/* Move the cell to OUT, padded with blanks to WIDTH, then two blanks. */
void block_table_end_cell(block_table *t, int width);

/* A header cell TEXT of WIDTH. */
void block_table_head(block_table *t, const char *text, int width);

/* The header cells over block_table_cells. */
void block_table_heads(block_table *t, bool with_requested);

/* The common cells of a block's row: address, size, state, device and
   stream, in the widths above; requested size follows size when WITH_REQUESTED. */
void block_table_cells(block_table *t, const block_ref *r, bool with_requested);

/* The last cell: R's innermost frame "name file:line", "-" without frames; then the newline. */
void block_table_frame(block_table *t, const block_ref *r);

/* OUT's sticky error as the analysis's result (MP_OK when none). */
mp_err block_out_status(const mp_out *out, const char *analysis, mp_diag *diag) MP_WUR;

#endif
