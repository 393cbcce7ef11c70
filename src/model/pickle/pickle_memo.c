/* pickle_memo.c - the pickle's memo (pickle_memo_int.h): writing its entries, and finding again those
   only counted. Its encoding is described in pickle_memo_int.h, beside the inline fetch. */
#include "pickle_memo_int.h"

#include <stdlib.h>
#include <sys/mman.h>

#include "mp_array.h"
#include "pickle_ops_int.h"

/* At most this many big handles and far texts (an index and a tag in 32 bits). */
#define MAX_FAR (1u << 27)

/* Zeroed memory for BYTES: address space only until touched. */
static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t bits_bytes(const struct mp_memo *memo)
{
	return (memo->cap / 64 + 1) * sizeof *memo->pinned;
}

static size_t checkpoints_bytes(const struct mp_memo *memo)
{
	return ((memo->cap >> MEMO_GROUP_SHIFT) + 1) * sizeof *memo->checkpoints;
}

mp_err mp_memo_map(struct mp_memo *memo, size_t len)
{
	*memo = (struct mp_memo){ .cap = len + 1 };
	memo->entry = map_zeroed(memo->cap * sizeof *memo->entry);
	memo->pinned = map_zeroed(bits_bytes(memo));
	memo->records = map_zeroed(bits_bytes(memo));
	memo->checkpoints = map_zeroed(checkpoints_bytes(memo));
	return memo->entry == NULL || memo->pinned == NULL || memo->records == NULL || memo->checkpoints == NULL
		       ? MP_E_NOMEM
		       : MP_OK;
}

void mp_memo_unmap(struct mp_memo *memo)
{
	if (memo->entry != NULL)
		munmap(memo->entry, memo->cap * sizeof *memo->entry);
	if (memo->pinned != NULL)
		munmap(memo->pinned, bits_bytes(memo));
	if (memo->records != NULL)
		munmap(memo->records, bits_bytes(memo));
	if (memo->checkpoints != NULL)
		munmap(memo->checkpoints, checkpoints_bytes(memo));
	free(memo->big);
	free(memo->texts);
	*memo = (struct mp_memo){ 0 };
}

static bool bit(const uint64_t *bits, uint64_t i)
{
	return (bits[i / 64] >> (i % 64)) & 1;
}

void mp_memo_pin(struct mp_memo *memo, uint64_t index, bool on)
{
	if (on)
		memo->pinned[index / 64] |= (uint64_t)1 << (index % 64);
	else
		memo->pinned[index / 64] &= ~((uint64_t)1 << (index % 64));
}

mp_err mp_memo_store(struct mp_memo *memo, uint64_t index, mp_val v)
{
	uint32_t enc = (uint32_t)v;

	if (v >= MEMO_ENC_TEXT_BIT) {
		if (memo->nbig >= MAX_FAR)
			return MP_E_LIMIT;
		if (mp_array_grow((void **)&memo->big, &memo->big_cap, memo->nbig + 1, sizeof *memo->big) != MP_OK)
			return MP_E_NOMEM;
		memo->big[memo->nbig] = v;
		enc = (uint32_t)(memo->nbig++ << 4) | MEMO_ENC_BIG;
	}
	memo->entry[index] = enc;
	if (index >= memo->len)
		memo->len = index + 1;
	mp_memo_pin(memo, index, false);
	return MP_OK;
}

void mp_memo_store_skipped(struct mp_memo *memo, uint64_t index)
{
	memo->entry[index] = (uint32_t)MP_SKIPPED;
}

bool mp_memo_holds_alone(const struct mp_memo *memo, uint64_t index, mp_val from)
{
	mp_val v = MP_ABSENT;
	size_t text_op;

	return !bit(memo->pinned, index) && mp_memo_fetch(memo, index, &v, &text_op) == MP_MEMO_VALUE && v == from;
}

void mp_memo_count_range(struct mp_memo *memo, size_t start, size_t after)
{
	/* A group's checkpoint may come before its first put: reading again from START, the count at START
	   in hand, passes the puts of the groups before it by. The groups only counted here are those the
	   range holds the first put of; one that began before it has its checkpoint already. */
	for (uint64_t g = memo->len >> MEMO_GROUP_SHIFT; memo->len < after && g <= (after - 1) >> MEMO_GROUP_SHIFT; g++)
		if (memo->checkpoints[g].value_op == 0)
			memo->checkpoints[g] = (struct mp_memo_checkpoint){ (uint64_t)start + 1, memo->len };
	if (after > memo->len)
		memo->len = after;
}

/* ---- entries found again */

/* Write at INDEX the entry of a put whose value the opcode at VALUE_OP made, found again: a text, list
   or dict passed over, built when fetched, or MP_SKIPPED; false when the table of far offsets cannot
   take it. */
static bool store_later(struct mp_memo *memo, const unsigned char *data, uint64_t index, size_t value_op)
{
	uint32_t enc = MEMO_ENC_TEXT_BIT | (uint32_t)value_op;

	if (!mp_pickle_is_text(data[value_op]) && data[value_op] != MP_OP_EMPTY_LIST &&
	    data[value_op] != MP_OP_EMPTY_DICT) {
		enc = (uint32_t)MP_SKIPPED;
	} else if (value_op >= MEMO_ENC_TEXT_BIT) {
		if (memo->ntexts >= MAX_FAR ||
		    mp_array_grow((void **)&memo->texts, &memo->texts_cap, memo->ntexts + 1, sizeof *memo->texts) !=
			    MP_OK)
			return false;
		memo->texts[memo->ntexts] = value_op;
		enc = (uint32_t)(memo->ntexts++ << 4) | MEMO_ENC_FAR_TEXT;
	}
	memo->entry[index] = enc;
	return true;
}

bool mp_memo_resolve(struct mp_memo *memo, const unsigned char *data, size_t len, uint64_t index, size_t upto)
{
	uint64_t group = index >> MEMO_GROUP_SHIFT;
	const struct mp_memo_checkpoint *cp = &memo->checkpoints[group];
	uint64_t next = cp->memo_len; /* the memo length, counted as the machine counted it */
	size_t p, prev = SIZE_MAX, size;

	if (cp->value_op == 0)
		return false;
	/* From the value of the group's first put to UPTO: the same opcodes, so the same puts, as when they
	   were counted. */
	for (p = (size_t)cp->value_op - 1; p < upto && next >> MEMO_GROUP_SHIFT <= group; p += size) {
		struct mp_pickle_tok t;
		uint64_t at;

		if (mp_pickle_next_op(data, p, len, &t) != MP_TOK_OK)
			break;
		size = t.size;
		if (t.flags & MP_OPF_PUT) {
			at = t.op == MP_OP_MEMOIZE ? next : t.arg;
			if (at >> MEMO_GROUP_SHIFT == group && at < memo->len && memo->entry[at] == MEMO_ENC_EMPTY &&
			    !bit(memo->records, at) && prev != SIZE_MAX && !store_later(memo, data, at, prev))
				return false;
			if (at >= next)
				next = at + 1;
		}
		prev = p;
	}
	return memo->entry[index] != MEMO_ENC_EMPTY;
}
