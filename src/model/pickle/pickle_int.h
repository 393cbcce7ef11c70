/* pickle_int.h - the pickle machine's state, shared by the reader and its skipper
   (private to src/model). */
#ifndef MEMPROF_PICKLE_INT_H
#define MEMPROF_PICKLE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_pickle_read.h"
#include "mp_value.h"
#include "pickle_memo_int.h"
#include "pickle_ops_int.h"

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
	struct mp_memo memo;
	size_t prev_opos;       /* offset of the opcode before the current one */
	size_t text_end;        /* offset just after the last str/bytes the machine pushed */
	size_t *skip_marks; /* the skipper's own mark stack */
	size_t skip_marks_cap;
	const struct mp_pickle_opts *opts;
	mp_diag *diag;
	struct mp_pickle_spans *spans; /* dicts read in one go, by their bytes (mp_pickle_fast.c), or NULL */
	bool spans_off;                /* the input does not repeat them: not cached */
	struct mp_pickle_ahead *ahead; /* the second thread passing over skip keys' lists, or NULL */
	unsigned fast_in; /* where the reads in one go are (MP_PICKLE_SKIP_IN_*, 0: a plain dict's; mp_pickle_fast.c) */
	int again_depth; /* containers being read again for a fetch, one inside the other */
};

/* Whether the skip keys apply in WHERE (MP_PICKLE_SKIP_IN_*; 0: in a value no record kind
   names, which only a projection that applies anywhere passes over; MP_PICKLE_SKIP_NOWHERE: a value
   read again because it is wanted). */
#define MP_PICKLE_SKIP_NOWHERE (1u << 8)
static inline bool mp_pickle_skips_in(const struct machine *m, unsigned where)
{
	const unsigned both = MP_PICKLE_SKIP_IN_BLOCKS | MP_PICKLE_SKIP_IN_TRACE;
	unsigned in;

	if (m->opts == NULL || m->opts->nskip_keys == 0)
		return false;
	in = m->opts->skip_in == 0 ? both : m->opts->skip_in;
	return where == 0 ? in == both : (in & where) != 0;
}

/* The one decision of every pass: whether a value stored under KEY in WHERE (as for mp_pickle_skips_in)
   is passed over. */
static inline bool mp_pickle_skip_key(const struct machine *m, mp_val key, unsigned where)
{
	for (size_t i = 0; mp_pickle_skips_in(m, where) && i < m->opts->nskip_keys; i++)
		if (key == m->opts->skip_keys[i])
			return true;
	return false;
}

/* The type tag of the stream reader's records on the stack, never a built value (mp_pickle_stream.c). */
#define MP_PICKLE_RECORD_TAG 11u

/* ---- the generic machine (mp_pickle_read.c), for a reader that takes over some opcodes */

/* Set up M to run the LEN bytes at DATA into HEAP (the memo mapped); end it with
   mp_pickle_machine_end whatever happened. */
mp_err mp_pickle_machine_start(struct machine *m, mp_heap *heap, const unsigned char *data, size_t len,
				const struct mp_pickle_opts *opts, mp_diag *diag) MP_WUR;
void mp_pickle_machine_end(struct machine *m);

/* Run M with STEP (the machine's, or a reader's that takes some opcodes over) until it says STOP,
   telling the progress function as the input is consumed; MP_E_TRUNCATED when the input ends first. */
mp_err mp_pickle_run(struct machine *m, mp_err (*step)(void *ctx, bool *done), void *ctx) MP_WUR;

/* Execute the opcode at m->pos; *DONE is set by STOP. */
mp_err mp_pickle_step(struct machine *m, bool *done) MP_WUR;

/* Write frozen value V to memo INDEX, a put counted (mp_memo_count) when
   its container opened and written now that the container is complete. */
mp_err mp_pickle_put_late(struct machine *m, uint64_t index, mp_val v) MP_WUR;

/* A fetch of memo INDEX whose entry is not a value (*KIND, mp_memo_fetch's): one only counted is found
   again (mp_memo_resolve); one passed over (MP_MEMO_LATER) is built now, a str or bytes from its opcode, a
   list or dict read in one go (mp_pickle_fast_again) where the projection applies only in some records (a
   trace entry fetches the frames of a block passed over), else MP_SKIPPED; *KIND and *V say what came of
   it. MP_E_SKIPPED when a value passed over is wanted and cannot be read so: read the input in full. */
mp_err mp_pickle_fetch_later(struct machine *m, uint64_t index, mp_val *v, enum mp_memo_kind *kind) MP_WUR;

/* Build the str or bytes whose opcode sits at offset AT (validated when passed over). */
mp_err mp_pickle_text_at(struct machine *m, size_t at, mp_val *out) MP_WUR;

/* Push V (no memo slot refers to it yet). */
mp_err mp_pickle_push(struct machine *m, mp_val v) MP_WUR;

/* Freeze the value of stack slot S for use inside another value and store
   its canonical handle in *OUT (see the memo's bookkeeping in mp_pickle_read.c). */
mp_err mp_pickle_settle(struct machine *m, struct slot *s, mp_val *out) MP_WUR;

/* Whether the value about to be built is stored under one of the skip keys of a plain dict
   (where the skip keys apply anywhere). */
bool mp_pickle_at_skip_key(const struct machine *m);

/* Pass over the list whose first opcode is at m->pos without building it; on success the offset after
   it is in *END and the memo counts what the list memoized, found again on a fetch (mp_memo_resolve:
   strings built then, the rest MP_SKIPPED). On failure nothing changed. Takes the second thread's
   result when it has one. */
bool mp_pickle_skip_value(struct machine *m, size_t *end);

/* The skipper's state: its own count of the puts, and its own mark stack. It reads and counts, and
   writes nothing shared: the machine and the second thread each run one. */
struct mp_skip_run {
	const unsigned char *data;
	size_t len;
	size_t memo_len;
	size_t *marks;
	size_t marks_cap;
};

/* The skipper on RUN from START (mp_pickle_skip.c): true with *END past the value and RUN's count
   advanced by its puts; false with the count as it was. */
bool mp_pickle_skip_run(struct mp_skip_run *run, size_t start, size_t *end);

/* ---- the second thread (mp_pickle_ahead.c): a producer of skip ranges. It reads the input ahead of
   the machine and passes over each list under a skip key, publishing where the list starts and ends and
   the memo's count before and after it; the machine, at a list it would pass over, takes that range
   instead of reading the list. It writes nothing the machine reads but its ring of results. */

/* Start the thread for M when it pays (a projection of a big input, two CPUs). */
void mp_pickle_ahead_start(struct machine *m);

/* The thread's range for the list at START, the memo's count being MEMO_LEN there: *END and the count
   after it. False when it has none, or has not got there soon, or counted otherwise (it is then
   stopped, and the machine goes on alone). */
bool mp_pickle_ahead_take(struct machine *m, size_t start, size_t memo_len, size_t *end, size_t *memo_after);

/* Stop the thread and free it. */
void mp_pickle_ahead_stop(struct machine *m);

#endif
