/* mp_block_query.c - `blocks`: the blocks a filter lets through, as a table. */
#include "mp_block_query.h"
#include "mp_array.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "block_int.h"
#include "mp_repr.h"

static const struct state_word {
	const char *word;
	unsigned bits;
} state_words[] = {
	{ "active_allocated", MP_BS_ACTIVE_ALLOCATED },
	{ "active_pending_free", MP_BS_ACTIVE_PENDING_FREE },
	{ "inactive", MP_BS_INACTIVE },
	{ "allocated", MP_BS_ACTIVE_ALLOCATED },
	{ "pending", MP_BS_ACTIVE_PENDING_FREE },
	{ "active", MP_BS_ACTIVE_ALLOCATED | MP_BS_ACTIVE_PENDING_FREE },
	{ "other", MP_BS_OTHER },
};

/* Longer words are cut in messages; none of the known ones comes close. */
#define SHOWN_WORD 64

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool state_word_bits(const char *w, size_t len, unsigned *bits)
{
	for (size_t i = 0; i < sizeof state_words / sizeof state_words[0]; i++)
		if (strlen(state_words[i].word) == len && strncasecmp(w, state_words[i].word, len) == 0) {
			*bits = state_words[i].bits;
			return true;
		}
	return false;
}

mp_err mp_block_states_parse(const char *text, unsigned *out, mp_diag *diag)
{
	unsigned bits = 0;
	const char *p = text;

	for (;;) {
		const char *end = strchr(p, ',');
		size_t len;
		unsigned w;

		if (end == NULL)
			end = p + strlen(p);
		while (p < end && is_blank(*p))
			p++;
		len = (size_t)(end - p);
		while (len > 0 && is_blank(p[len - 1]))
			len--;
		if (len == 0)
			return mp_fail(diag, MP_E_USAGE, "block states: an empty state in '%.*s'", SHOWN_WORD, text);
		if (!state_word_bits(p, len, &w))
			return mp_fail(diag, MP_E_USAGE,
				       "block states: unknown state '%.*s' (known: allocated, pending, active, inactive, "
				       "other, active_allocated, active_pending_free)",
				       len > SHOWN_WORD ? SHOWN_WORD : (int)len, p);
		bits |= w;
		if (*end == '\0')
			break;
		p = end + 1;
	}
	*out = bits;
	return MP_OK;
}

void mp_block_filter_init(mp_block_filter *f)
{
	*f = (mp_block_filter){ .device = -1, .any_stream = true, .states = 0, .min_size = INT64_MIN, .top = 0 };
}

static bool filter_keeps(const mp_snapshot *snap, const mp_block_ref *r, const void *ctx)
{
	const mp_block_filter *f = ctx;
	const mp_segment *seg = &snap->segments[r->seg];

	if (f->device >= 0 && r->device != f->device)
		return false;
	if (!f->any_stream && (!(seg->present & MP_F_SEG_STREAM) || seg->stream != f->stream))
		return false;
	if (f->states != 0 && !(f->states & r->state))
		return false;
	return r->size >= f->min_size;
}

/* Last keys of both orders: list position, so that equal blocks keep their order. */
static int cmp_index(const mp_block_ref *a, const mp_block_ref *b)
{
	return a->block < b->block ? -1 : a->block > b->block;
}

static int cmp_device_address(const void *pa, const void *pb)
{
	const mp_block_ref *a = pa, *b = pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->address != b->address)
		return a->address < b->address ? -1 : 1;
	return cmp_index(a, b);
}

static int cmp_largest(const void *pa, const void *pb)
{
	const mp_block_ref *a = pa, *b = pb;

	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	if (a->address != b->address)
		return a->address < b->address ? -1 : 1;
	return cmp_index(a, b);
}

static void put_count(mp_out *out, size_t n)
{
	mp_out_printf(out, "%zu block%s", n, n == 1 ? "" : "s");
}

static void write_row(mp_block_table *t, const mp_block_ref *r)
{
	const mp_segment *seg = &t->snap->segments[r->seg];

	mp_block_table_cells(t, r, true);
	block_put_hex(&t->cell, seg->address);
	mp_block_table_end_cell(t, BT_ADDRESS);
	if (seg->present & MP_F_SEG_SEGMENT_POOL_ID)
		mp_repr(t->snap->heap, seg->segment_pool_id, &t->cell);
	else
		mp_out_putc(&t->cell, '-');
	mp_block_table_end_cell(t, BT_NUMBER);
	mp_block_table_frame(t, r);
}

static void write_table(mp_block_table *t, const mp_block_ref *refs, size_t n, size_t shown)
{
	mp_i128 total = 0, total_shown = 0;

	for (size_t i = 0; i < n; i++) {
		total += refs[i].size;
		if (i < shown)
			total_shown += refs[i].size;
	}
	if (shown > 0) {
		mp_block_table_heads(t, true);
		mp_block_table_head(t, "segment", BT_ADDRESS);
		mp_block_table_head(t, "pool", BT_NUMBER);
		mp_out_puts(t->out, "frame\n");
	}
	for (size_t i = 0; i < shown; i++)
		write_row(t, &refs[i]);
	if (shown < n) {
		mp_out_printf(t->out, "showing %zu of ", shown);
		put_count(t->out, n);
		mp_out_puts(t->out, ", ");
		mp_format_size(t->out, total_shown, t->units);
		mp_out_puts(t->out, " of ");
	} else {
		put_count(t->out, n);
		mp_out_puts(t->out, ", ");
	}
	mp_format_size(t->out, total, t->units);
	mp_out_putc(t->out, '\n');
}

mp_err mp_analysis_blocks(const mp_snapshot *snap, const mp_block_filter *f, enum mp_units u, mp_out *out,
			  size_t *nmatched, mp_diag *diag)
{
	mp_block_ref *refs;
	size_t n, shown;
	mp_block_table t;
	mp_err err = mp_block_refs_collect(snap, filter_keeps, f, &refs, &n, "blocks", diag);

	if (err != MP_OK)
		return err;
	/* Largest first puts the N shown at the front, and their total comes from the same order. */
	if (n > 1)
		mp_sort(refs, n, sizeof *refs, f->top > 0 ? cmp_largest : cmp_device_address);
	shown = f->top > 0 && f->top < n ? f->top : n;
	mp_block_table_init(&t, snap, u, out);
	write_table(&t, refs, n, shown);
	mp_block_table_free(&t);
	free(refs);
	*nmatched = n;
	return mp_block_out_status(out, "blocks", diag);
}
