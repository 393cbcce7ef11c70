/* pickle_fast_int.h - small dicts and lists of a pickle read in one go, for the stream reader
   (private to src/model).

   A big snapshot is nearly all blocks and frames: dicts of a few atoms and
   lists of a few such dicts, in the shapes CPython writes ('}' MEMOIZE '('
   pairs 'u', ']' MEMOIZE '(' items 'e', a single pair or item with 's' or
   'a', or an empty list). Values fetched from the memo are taken when they
   are complete (an atom, a frozen container, a list a projection passed
   over). These functions read one such value from its first opcode to its
   last without the machine's stack, marks or open containers, and build it
   frozen (mp_heap_make). They count the memo puts inside it as the machine
   would (mp_memo_count), and write the container's own entry once it
   is complete. Anything else makes them return false: the caller then
   restores the memo length and lets the machine read the value. */
#ifndef MEMPROF_PICKLE_FAST_INT_H
#define MEMPROF_PICKLE_FAST_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "pickle_int.h"

/* Most pairs in a dict read so. */
#define MP_FAST_PAIRS 16

/* A block of the stream reader at m->pos ('}' MEMOIZE '(' pairs SETITEMS, its own put counted as a
   record's, never built): keys strs, values atoms, lists passed over under a skip key where the skip
   keys apply in blocks, small containers
   or values fetched from the memo; at most MP_FAST_PAIRS, no key twice, no second batch. KV gets the *N
   pairs, *AFTER the offset past its SETITEMS; false with the memo's count as it was. m->pos stays. */
bool mp_pickle_fast_record(struct machine *m, mp_val *kv, size_t *n, size_t *after);

/* Read the dict (IS_DICT) or list at m->pos and push it; false with m->pos and
   the memo length as they were. */
bool mp_pickle_fast_container(struct machine *m, bool is_dict);

/* Read again, into *V, the list or dict at AT that a projection passed over, memo INDEX its own put (the
   puts inside it found again at the indices they were counted at, and written); false when it is not one
   the reads in one go take. The machine's place and count are as they were. */
bool mp_pickle_fast_again(struct machine *m, uint64_t index, size_t at, mp_val *v);

/* Free what the reads in one go kept for M (the cache of dicts seen). */
void mp_pickle_fast_end(struct machine *m);

#endif
