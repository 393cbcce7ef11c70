/* snapshot_build_int.h - building the typed snapshot record by record (private to src/model).

   The one place that turns a record's key/value pairs into mp_segment, mp_block,
   mp_trace_entry and the top level, with their type checks, shapes and extras.
   Its producers: the generic value of a whole snapshot (mp_snapshot_from.c), the
   pickle stream reader that never builds the records' dicts (pickle/), and the
   walker's snapshot of live memory.

   ITEMS are N key/value pairs interleaved (as mp_heap_items gives a dict's), in
   the order they came; keys are unique. The value of a key that holds child
   records (a segment's 'blocks', the top's 'segments' and 'device_traces') must
   be a list but is not read here: the children are added on their own, and a
   record may come before or after its children (see each kind). */
#ifndef MEMPROF_SNAPSHOT_BUILD_INT_H
#define MEMPROF_SNAPSHOT_BUILD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_snapshot.h"
#include "mp_value.h"
#include "snapshot_fields_int.h"

typedef struct mp_snapshot_builder mp_snapshot_builder;

/* Start a snapshot whose values live in HEAP (the snapshot owns HEAP once finished). */
mp_err mp_sb_new(mp_heap *heap, mp_diag *diag, mp_snapshot_builder **out) MP_WUR;

/* The kinds of record (bits 1 << MP_REC_*) whose frames a projection may have passed over (all, unless
   said): MP_SKIPPED in the frames of another kind is a value wanted that was not read (MP_E_SKIPPED). */
void mp_sb_frames_passed_over(mp_snapshot_builder *sb, unsigned records);

/* Room for N more blocks (a hint; nothing is required of it). */
mp_err mp_sb_reserve_blocks(mp_snapshot_builder *sb, size_t n) MP_WUR;

/* The top-level dict's pairs; or, for the oldest form, a bare list of segments. */
mp_err mp_sb_top(mp_snapshot_builder *sb, const mp_val *items, size_t n) MP_WUR;
void mp_sb_bare_list(mp_snapshot_builder *sb);

/* A segment's pairs; its blocks, then the end of its list of blocks. The I-th
   segment given gets the I-th list of blocks ended, whichever comes first. */
mp_err mp_sb_segment(mp_snapshot_builder *sb, const mp_val *items, size_t n) MP_WUR;
mp_err mp_sb_block(mp_snapshot_builder *sb, const mp_val *items, size_t n) MP_WUR;
mp_err mp_sb_blocks_end(mp_snapshot_builder *sb) MP_WUR;

/* An entry of the device list being built, then that list's end. */
mp_err mp_sb_trace_entry(mp_snapshot_builder *sb, const mp_val *items, size_t n) MP_WUR;
mp_err mp_sb_device_end(mp_snapshot_builder *sb) MP_WUR;

/* The pairs of a record of kind REC (MP_REC_TOP, _SEGMENT, _BLOCK or _TRACE): one of the four above. */
mp_err mp_sb_record(mp_snapshot_builder *sb, enum mp_record rec, const mp_val *items, size_t n) MP_WUR;

/* The present bits of the top level (MP_F_TOP_*) given so far. */
uint32_t mp_sb_present(const mp_snapshot_builder *sb);

/* The value of the children key of the last record given (MP_ABSENT if it had none). */
mp_val mp_sb_children(const mp_snapshot_builder *sb);

/* Fail with "expected a dict" for GOT, found where the next record of kind REC
   (a segment, block or trace entry) was expected. */
mp_err mp_sb_not_a_record(mp_snapshot_builder *sb, enum mp_record rec, mp_val got);

/* The Python type name of V, for messages ("dict", "int", ...). */
const char *mp_val_type_name(mp_val v);

/* Hand over the snapshot (it takes the heap) and free the builder. */
mp_err mp_sb_finish(mp_snapshot_builder *sb, mp_snapshot **out) MP_WUR;

/* Free the builder and what it built, but not the heap (still the caller's). SB may be NULL. */
void mp_sb_abandon(mp_snapshot_builder *sb);

#endif
