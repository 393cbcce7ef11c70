/* block_rows.c - finding blocks and writing their cells, for the block analyses. */
#include "block_int.h"

#include <stdlib.h>

#include "mp_array.h"
#include "mp_blocks.h"
#include "mp_frame_filter.h"
#include "mp_repr.h"
#include "mp_snapshot_extras.h"

mp_err mp_block_refs_collect(const mp_snapshot *snap, mp_block_keep_fn keep, const void *ctx, mp_block_ref **out,
			     size_t *n, const char *analysis, mp_diag *diag)
{
	mp_block_ref *refs = NULL;
	size_t count = 0, cap = 0;

	for (size_t i = 0; i < snap->nsegments; i++) {
		const mp_segment *seg = &snap->segments[i];
		const mp_block *blocks = mp_segment_blocks(snap, seg);
		mp_i128 next = seg->address;

		for (size_t j = 0; j < seg->nblocks; j++) {
			mp_block_ref r = {
				.device = (seg->present & MP_F_SEG_DEVICE) ? seg->device : -1,
				.address = block_address(&blocks[j], &next),
				.size = blocks[j].size,
				.state = block_state_bit(snap, &blocks[j]),
				.seg = i,
				.block = seg->first_block + j,
			};

			if (!keep(snap, &r, ctx))
				continue;
			if (mp_array_grow((void **)&refs, &cap, count + 1, sizeof *refs) != MP_OK) {
				free(refs);
				return mp_fail(diag, MP_E_NOMEM, "%s: out of memory", analysis);
			}
			refs[count++] = r;
		}
	}
	*out = refs;
	*n = count;
	return MP_OK;
}

int64_t block_address(const mp_block *b, mp_i128 *next)
{
	/* Wraps like the int64 it stands in for on hostile sizes; only ever printed or compared. */
	int64_t address = (b->present & MP_F_BLK_ADDRESS) ? b->address : (int64_t)(uint64_t)*next;

	*next = (mp_i128)address + b->size;
	return address;
}

unsigned block_state_bit(const mp_snapshot *snap, const mp_block *b)
{
	const mp_keys *k = mp_heap_keys(snap->heap);

	if (!(b->present & MP_F_BLK_STATE))
		return MP_BS_OTHER;
	if (mp_val_is(b->state, k->active_allocated))
		return MP_BS_ACTIVE_ALLOCATED;
	if (mp_val_is(b->state, k->active_pending_free))
		return MP_BS_ACTIVE_PENDING_FREE;
	if (mp_val_is(b->state, k->inactive))
		return MP_BS_INACTIVE;
	return MP_BS_OTHER;
}

mp_val mp_block_frames(const mp_snapshot *snap, const mp_block *b)
{
	static const mp_block_at nowhere = { "blocks", 0, 0 };
	mp_history_item first;

	if (b->present & MP_F_BLK_FRAMES)
		return b->frames;
	/* No DIAG: a malformed record just means no frames here. */
	if (mp_block_history_len(snap, b) > 0 && mp_block_history_get(snap, b, 0, &first, &nowhere, NULL) == MP_OK)
		return first.frames;
	return MP_ABSENT;
}

/* ASCII only, whatever the locale. */
static bool is_word(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_'))
			return false;
	return true;
}

void block_put_word(const mp_snapshot *snap, bool present, mp_val v, mp_out *out)
{
	size_t len;
	const char *s = mp_val_type(v) == MP_T_STR ? mp_heap_atom(snap->heap, v, &len) : NULL;

	if (!present)
		mp_out_putc(out, '-');
	else if (s != NULL && is_word(s, len))
		mp_out_write(out, s, len);
	else
		mp_repr(snap->heap, v, out);
}

void mp_block_put_frame(const mp_snapshot *snap, mp_val frames, size_t i, const char *sep, mp_out *out)
{
	mp_frame f;

	if (!mp_frames_get(snap, frames, i, &f)) {
		mp_out_putc(out, '?');
		return;
	}
	mp_out_write(out, f.name, f.name_len);
	mp_out_puts(out, sep);
	mp_out_write(out, f.filename, f.filename_len);
	mp_out_putc(out, ':');
	mp_out_i64(out, f.line);
}

void block_put_hex(mp_out *out, int64_t v)
{
	mp_out_printf(out, "0x%llx", (unsigned long long)(uint64_t)v);
}

void block_put_field(mp_out *out, bool present, int64_t v)
{
	if (present)
		mp_out_i64(out, v);
	else
		mp_out_putc(out, '-');
}

void mp_block_table_init(mp_block_table *t, const mp_snapshot *snap, enum mp_units u, mp_out *out)
{
	t->snap = snap;
	t->units = u;
	t->out = out;
	mp_out_init(&t->cell);
}

void mp_block_table_free(mp_block_table *t)
{
	mp_out_free(&t->cell);
}

void mp_block_table_end_cell(mp_block_table *t, int width)
{
	size_t len = t->cell.len;
	int pad = len < (size_t)width ? width - (int)len : 0;

	if (t->cell.err != MP_OK && t->out->err == MP_OK)
		t->out->err = t->cell.err; /* a lost cell fails the output like a lost line */
	if (len > 0)
		mp_out_write(t->out, t->cell.data, len);
	mp_out_printf(t->out, "%*s  ", pad, "");
	t->cell.len = 0;
}

void mp_block_table_head(mp_block_table *t, const char *text, int width)
{
	mp_out_puts(&t->cell, text);
	mp_block_table_end_cell(t, width);
}

void mp_block_table_heads(mp_block_table *t, bool with_requested)
{
	mp_block_table_head(t, "address", BT_ADDRESS);
	mp_block_table_head(t, "size", BT_SIZE);
	if (with_requested)
		mp_block_table_head(t, "requested", BT_SIZE);
	mp_block_table_head(t, "state", BT_STATE);
	mp_block_table_head(t, "device", BT_NUMBER);
	mp_block_table_head(t, "stream", BT_NUMBER);
}

void mp_block_table_cells(mp_block_table *t, const mp_block_ref *r, bool with_requested)
{
	const mp_segment *seg = &t->snap->segments[r->seg];
	const mp_block *b = &t->snap->blocks[r->block];

	block_put_hex(&t->cell, r->address);
	mp_block_table_end_cell(t, BT_ADDRESS);
	mp_format_size(&t->cell, r->size, t->units);
	mp_block_table_end_cell(t, BT_SIZE);
	if (with_requested) {
		if (b->present & MP_F_BLK_REQUESTED_SIZE)
			mp_format_size(&t->cell, b->requested_size, t->units);
		else
			mp_out_putc(&t->cell, '-');
		mp_block_table_end_cell(t, BT_SIZE);
	}
	block_put_word(t->snap, b->present & MP_F_BLK_STATE, b->state, &t->cell);
	mp_block_table_end_cell(t, BT_STATE);
	block_put_field(&t->cell, seg->present & MP_F_SEG_DEVICE, seg->device);
	mp_block_table_end_cell(t, BT_NUMBER);
	block_put_field(&t->cell, seg->present & MP_F_SEG_STREAM, seg->stream);
	mp_block_table_end_cell(t, BT_NUMBER);
}

/* The frame that says who allocated: the first of the user's own code, else the first _memory_viz.py shows,
   else the innermost (with C++ frames, the innermost is always the unwinder itself). */
static size_t site_frame(const mp_snapshot *snap, mp_val frames, size_t n)
{
	size_t kept = n;
	mp_frame f;

	for (size_t i = 0; i < n; i++) {
		if (!mp_frames_get(snap, frames, i, &f))
			continue;
		if (mp_frame_is_user(&f))
			return i;
		if (kept == n && mp_frame_kept(&f))
			kept = i;
	}
	return kept < n ? kept : 0;
}

void mp_block_table_frame(mp_block_table *t, const mp_block_ref *r)
{
	const mp_block *b = &t->snap->blocks[r->block];
	mp_val frames = mp_block_frames(t->snap, b), owner = mp_block_extra_value(t->snap, b, "owner");
	size_t n = mp_frames_len(t->snap, frames), len;
	const char *name = owner != MP_ABSENT && mp_val_type(owner) == MP_T_STR ? mp_heap_atom(t->snap->heap, owner, &len)
									     : NULL;

	if (n == 0)
		mp_out_putc(t->out, '-');
	else
		mp_block_put_frame(t->snap, frames, site_frame(t->snap, frames, n), " ", t->out);
	/* the tensor that owns it, where the Python heap was read (src/owners: the 'owner' key) */
	if (name != NULL)
		mp_out_printf(t->out, "  (owner: %.*s)", (int)len, name);
	mp_out_putc(t->out, '\n');
}

mp_err mp_block_out_status(const mp_out *out, const char *analysis, mp_diag *diag)
{
	if (out->err == MP_OK)
		return MP_OK;
	return mp_fail(diag, out->err, "%s: cannot write the output: %s", analysis, mp_strerror(out->err));
}
