/* mp_pickle_machine.h - the pickle machine's state, shared by the reader and its skipper
   (private to src/model). */
#ifndef MEMPROF_PICKLE_MACHINE_H
#define MEMPROF_PICKLE_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_pickle_read.h"
#include "mp_value.h"

/* Memo entries are 32 bits: a value handle when it fits, else a reference
   into big[] marked with the unused tag 15, or a string the skipper passed
   over, by the offset of its opcode in lazy[] (tag 14), built when fetched. */
#define MEMO_BIG_TAG 15u
#define MEMO_LAZY_TAG 14u
/* Or, for inputs under 2 GiB, that offset itself with the top bit set. */
#define MEMO_LAZY_BIT 0x80000000u
#define MEMO_EMPTY 0u /* MP_ABSENT: never a stored value */
#define NO_MEMO UINT32_MAX
#define PROGRESS_STEP ((size_t)8 << 20)

/* A value on the stack, with the memo slot that refers to it (if exactly one
   does) so that a container frozen into an equal existing one can be replaced
   in the memo and its record given back. */
struct slot {
	mp_val v;
	uint32_t memo; /* NO_MEMO: none, or more than one reference exists */
};

struct machine {
	mp_heap *heap;
	const unsigned char *data;
	size_t len;
	size_t pos;    /* offset of the next byte to read */
	size_t opos;   /* offset of the current opcode */
	struct slot *stack;
	size_t nstack, stack_cap;
	size_t *marks;
	size_t nmarks, marks_cap;
	uint32_t *memo;
	uint64_t *memo_pinned; /* bit set: entry was fetched while its container was open */
	size_t memo_len, memo_bytes, pinned_bytes;
	mp_val *big;
	size_t nbig, big_cap;
	uint64_t *lazy;
	size_t nlazy, lazy_cap;
	size_t *skip_marks; /* the skipper's own mark stack */
	size_t skip_marks_cap;
	const struct mp_pickle_opts *opts;
	mp_diag *diag;
};

/* The N-byte little-endian unsigned number at P. */
static inline uint64_t mp_pickle_read_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* ---- the generic machine (mp_pickle_read.c), for a reader that takes over some opcodes */

/* Set up M to run the LEN bytes at DATA into HEAP (the memo mapped); end it with
   mp_pickle_machine_end whatever happened. */
mp_err mp_pickle_machine_start(struct machine *m, mp_heap *heap, const unsigned char *data, size_t len,
				const struct mp_pickle_opts *opts, mp_diag *diag) MP_WUR;
void mp_pickle_machine_end(struct machine *m);

/* Execute the opcode at m->pos; *DONE is set by STOP. */
mp_err mp_pickle_step(struct machine *m, bool *done) MP_WUR;

/* Push V (no memo slot refers to it yet). */
mp_err mp_pickle_push(struct machine *m, mp_val v) MP_WUR;

/* Freeze the value of stack slot S for use inside another value and store
   its canonical handle in *OUT (see the memo's bookkeeping in mp_pickle_read.c). */
mp_err mp_pickle_settle(struct machine *m, struct slot *s, mp_val *out) MP_WUR;

/* Whether the value about to be built is stored under one of the skip keys. */
bool mp_pickle_at_skip_key(const struct machine *m);

/* Pass over the list whose first opcode is at m->pos without building it;
   on success the offset after it is in *END and the memo holds what the list
   memoized (strings lazily, the rest as MP_SKIPPED). On failure nothing changed. */
bool mp_pickle_skip_value(struct machine *m, size_t *end);

#endif
