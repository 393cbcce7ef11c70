/* mp_pickle_write.h - write generic values as a protocol 4 pickle that CPython and PyTorch's memory_viz page read. */
#ifndef MEMPROF_PICKLE_WRITE_H
#define MEMPROF_PICKLE_WRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "mp_err.h"
#include "mp_out.h"
#include "mp_value.h"

/* Most nested containers mp_pickle_write accepts (the walk uses its own stack,
   not the C stack; this bounds its memory and that of the readers). */
#define MP_PICKLE_WRITE_MAX_DEPTH 10000

/* Append ROOT (a value of HEAP) to OUT as a protocol 4 pickle, framed like
   CPython's (FRAME opcodes every ~64 KiB) and memoized by handle: every str and
   non-empty container is written once, later occurrences are memo gets, so
   shared frame lists and repeated keys stay small. Only opcodes that both
   CPython's pickle.load and the JavaScript unpickler of PyTorch's memory_viz
   page understand are used (SCHEMA.md lists them).

   Returns MP_OK, or with a one-line DIAG naming the place in ROOT:
   MP_E_UNSUPPORTED for a bytes value (the page has no bytes opcode),
   MP_E_RANGE for an int needing more than 255 bytes (the page reads no LONG4),
   MP_E_LIMIT for nesting deeper than MP_PICKLE_WRITE_MAX_DEPTH,
   MP_E_TYPE for an unhashable dict key or MP_ABSENT inside ROOT, MP_E_NOMEM
   or OUT's sticky error.
   On failure OUT holds a partial pickle that the caller must discard. HEAP is
   only read; OUT is not flushed. */
mp_err mp_pickle_write(const mp_heap *heap, mp_val root, mp_out *out, mp_diag *diag) MP_WUR;

#endif
