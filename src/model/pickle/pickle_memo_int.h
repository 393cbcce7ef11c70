/* pickle_memo_int.h - the pickle's memo (private to src/model/pickle): what MEMOIZE and BINPUT stored, by
   index, for BINGET to fetch. Its encodings are pickle_memo.c's own.

   An entry holds a built value, or a value passed over, built when fetched from its opcode's place in
   the input (a str or bytes; a list or dict a projection skipped: mp_pickle_fetch_later), or MP_SKIPPED
   (a value a projection passed over, not to be built), or nothing yet: most puts of a
   big snapshot are only counted (a str just read, whatever a skipped list memoizes, a record of the
   stream reader), and writing them (tens of megabytes) cost more than the rest of a projection. Such an
   entry, should it be fetched, is found again by reading the input once more from the checkpoint of its
   group of 64 indices (mp_memo_resolve). The arrays are mapped for as many entries as the input has
   bytes (every put takes one): address space only until touched.

   Two passes may share one memo: the machine and the thread reading ahead (mp_pickle_ahead.c), each with
   its own count of the puts it has seen; the entries they write are at indices the other does not touch
   at the same time (that protocol is the thread's, in mp_pickle_ahead.c). */
#ifndef MEMPROF_PICKLE_MEMO_INT_H
#define MEMPROF_PICKLE_MEMO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_value.h"

/* Indices are found again by groups of 1 << MEMO_GROUP_SHIFT. */
#define MEMO_GROUP_SHIFT 6

/* Where the first put of a group of memo indices is: the offset of the opcode whose value it memoized,
   plus one (0: no put yet), and the memo length just before that put, from which the group's indices
   are counted again. */
struct mp_memo_checkpoint {
	uint64_t value_op;
	uint64_t memo_len;
};

struct mp_memo {
	uint32_t *entry;       /* encoded entries */
	uint64_t *pinned;      /* bit set: fetched while its container was open */
	uint64_t *records;     /* bit set: a put of a record the stream reader did not build */
	struct mp_memo_checkpoint *checkpoints; /* per group of indices */
	size_t len;            /* indices put (written or counted) so far */
	size_t cap;            /* indices mapped */
	mp_val *big;           /* values whose handles do not fit an entry */
	size_t nbig, big_cap;
	uint64_t *texts;       /* offsets of texts passed over that do not fit an entry */
	size_t ntexts, texts_cap;
};

/* What an entry holds (mp_memo_fetch). */
enum mp_memo_kind {
	MP_MEMO_UNDEFINED, /* never put */
	MP_MEMO_VALUE,     /* a value (its handle, to resolve in the heap) */
	MP_MEMO_LATER,     /* a value passed over (str, bytes, list, dict): the offset of its opcode */
	MP_MEMO_COUNTED,   /* put, but only counted: mp_memo_resolve writes it */
	MP_MEMO_RECORD,    /* a record of the stream reader: never a value */
};

/* Map the memo for an input of LEN bytes; MP_E_NOMEM. End with mp_memo_unmap whatever happened. */
mp_err mp_memo_map(struct mp_memo *memo, size_t len) MP_WUR;
void mp_memo_unmap(struct mp_memo *memo);

/* Write value V at INDEX (< memo->cap), unpinned, the length made to count it; MP_E_LIMIT (too many big
   handles) or MP_E_NOMEM. */
mp_err mp_memo_store(struct mp_memo *memo, uint64_t index, mp_val v) MP_WUR;
/* Write MP_SKIPPED at INDEX (the length is the caller's to count). */
void mp_memo_store_skipped(struct mp_memo *memo, uint64_t index);

/* The encoding of an entry, pickle_memo.c's and the inline fetch's only. 32 bits: a value's handle when
   it fits below TEXT_BIT; a value passed over, as the offset of its opcode with TEXT_BIT set (inputs
   under 2 GiB), or as an index into texts[] tagged FAR_TEXT in its low 4 bits; a handle that does not
   fit, as an index into big[] tagged BIG; or EMPTY (0, MP_ABSENT: never a stored value), for a put
   only counted. Tags 14 and 15 are types no handle has. */
#define MEMO_ENC_EMPTY 0u
#define MEMO_ENC_TEXT_BIT 0x80000000u
#define MEMO_ENC_FAR_TEXT 14u
#define MEMO_ENC_BIG 15u

/* What entry INDEX holds: *V for a value, *TEXT_OP for one passed over. Inline: the reads in one go fetch every
   frame's keys. */
static inline enum mp_memo_kind mp_memo_fetch(const struct mp_memo *memo, uint64_t index, mp_val *v,
					      size_t *text_op)
{
	uint32_t enc;

	if (index >= memo->len)
		return MP_MEMO_UNDEFINED;
	if ((enc = memo->entry[index]) == MEMO_ENC_EMPTY)
		return (memo->records[index / 64] >> (index % 64)) & 1 ? MP_MEMO_RECORD : MP_MEMO_COUNTED;
	if ((enc & MEMO_ENC_TEXT_BIT) || (enc & 15u) == MEMO_ENC_FAR_TEXT) {
		*text_op = (enc & MEMO_ENC_TEXT_BIT) ? enc & ~MEMO_ENC_TEXT_BIT : (size_t)memo->texts[enc >> 4];
		return MP_MEMO_LATER;
	}
	*v = (enc & 15u) == MEMO_ENC_BIG ? memo->big[enc >> 4] : (mp_val)enc;
	return MP_MEMO_VALUE;
}
/* Entry INDEX as it is stored, for telling equal fetches apart (0 for one never written). */
static inline uint32_t mp_memo_word(const struct mp_memo *memo, uint64_t index)
{
	return memo->entry[index];
}

/* Whether INDEX holds exactly value FROM, unpinned: it may then be pointed at TO (mp_memo_store). */
bool mp_memo_holds_alone(const struct mp_memo *memo, uint64_t index, mp_val from);
/* Mark INDEX as fetched while its container was open (ON), or not. */
void mp_memo_pin(struct mp_memo *memo, uint64_t index, bool on);

/* Note that a put of INDEX follows the opcode at VALUE_OP, the memo length being MEMO_LEN before it, if
   it is the first of its group. */
static inline void mp_memo_checkpoint(struct mp_memo_checkpoint *checkpoints, uint64_t index, size_t value_op,
				      size_t memo_len)
{
	struct mp_memo_checkpoint *c = &checkpoints[index >> MEMO_GROUP_SHIFT];

	if (c->value_op == 0) {
		c->value_op = (uint64_t)value_op + 1;
		c->memo_len = memo_len;
	}
}

/* Count a put of the next index after the opcode at VALUE_OP without writing it (RECORD: of a record).
   Inline: a big snapshot has tens of millions. */
static inline void mp_memo_count(struct mp_memo *memo, size_t value_op, bool record)
{
	uint64_t index = memo->len;

	mp_memo_checkpoint(memo->checkpoints, index, value_op, memo->len);
	if (record)
		memo->records[index / 64] |= (uint64_t)1 << (index % 64);
	memo->len = index + 1;
}

/* Count the puts of a value passed over from offset START, the count going from memo->len to AFTER:
   each group of indices that begins there is found again by reading from START. */
void mp_memo_count_range(struct mp_memo *memo, size_t start, size_t after);

/* Write the counted entries of INDEX's group, reading the LEN bytes at DATA again from the group's
   checkpoint up to offset UPTO as they were read the first time: texts, lists and dicts built when
   fetched, the rest MP_SKIPPED. False when INDEX was never put. */
bool mp_memo_resolve(struct mp_memo *memo, const unsigned char *data, size_t len, uint64_t index, size_t upto);

#endif
