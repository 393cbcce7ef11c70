/* block_int.h - what the block analyses (mp_block_query.c, mp_block_where.c, mp_block_diff.c) share
   beyond mp_block_rows.h: block addresses and states, field cells and column widths (private to
   src/analysis). */
#ifndef MEMPROF_BLOCK_INT_H
#define MEMPROF_BLOCK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_block_query.h"
#include "mp_block_rows.h"

/* The address of B, walking a segment's blocks in order with *NEXT (start it
   at the segment's address): B's own, or for a legacy block without one, where
   the blocks before it end. Moves *NEXT past B. */
int64_t block_address(const mp_block *b, mp_i128 *next);

/* B's state as one enum mp_block_states bit. */
unsigned block_state_bit(const mp_snapshot *snap, const mp_block *b);

/* Write a str field V such as a state or a segment type: the text when it is
   one plain word, else repr() (so odd input stays on one line), "-" when not PRESENT. */
void block_put_word(const mp_snapshot *snap, bool present, mp_val v, mp_out *out);

/* Write "0x" and V in hex (as an unsigned 64-bit address). */
void block_put_hex(mp_out *out, int64_t v);

/* Write V in decimal when PRESENT, else "-". */
void block_put_field(mp_out *out, bool present, int64_t v);

/* Column widths shared by the block tables. */
enum { BT_ADDRESS = 14, BT_SIZE = 9, BT_STATE = 19, BT_NUMBER = 6 };

#endif
