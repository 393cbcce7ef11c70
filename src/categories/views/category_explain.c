/* category_explain.c - `categories --explain ADDR`: one block's category and where it came from. */
#include <stdlib.h>

#include "category_int.h"
#include "mp_repr.h"
#include "mp_snapshot_extras.h"


static bool holds_addr(const mp_snapshot *snap, const mp_block_ref *r, const void *ctx)
{
	const mp_category_opts *o = ctx;

	(void)snap;
	return (o->device < 0 || r->device == o->device) && (mp_i128)r->address <= (mp_i128)o->explain_addr &&
	       (mp_i128)o->explain_addr < (mp_i128)r->address + r->size;
}

static void put_globs(mp_out *out, const char *what, const char *const *globs)
{
	if (globs == NULL)
		return;
	mp_out_printf(out, " %s ", what);
	for (size_t i = 0; globs[i] != NULL; i++)
		mp_out_printf(out, "%s%s", i ? "|" : "", globs[i]);
}

/* The conditions of RULE, one line each, and the frame the last frame condition met. */
static void put_conditions(const mp_category_classifier *c, const mp_category_rule *rule, mp_val frames, int32_t frame,
			   mp_out *out)
{
	for (size_t i = 0; i < rule->nframes; i++) {
		mp_out_printf(out, "  condition: %s frame", rule->frames[i].innermost_user ? "innermost user" : "any");
		put_globs(out, "file", rule->frames[i].file);
		put_globs(out, "function", rule->frames[i].function);
		mp_out_putc(out, '\n');
	}
	if (rule->states != 0)
		mp_out_printf(out, "  condition: state (mask 0x%x)\n", rule->states);
	if (rule->has_min_size || rule->has_max_size)
		mp_out_printf(out, "  condition: size in [%lld, %lld]\n", (long long)(rule->has_min_size ? rule->min_size : 0),
			      (long long)(rule->has_max_size ? rule->max_size : INT64_MAX));
	if (rule->has_stream)
		mp_out_printf(out, "  condition: stream %lld\n", (long long)rule->stream);
	if (rule->has_pool)
		mp_out_printf(out, "  condition: pool (%lld, %lld)\n", (long long)rule->pool[0], (long long)rule->pool[1]);
	if (rule->segment_type != NULL)
		mp_out_printf(out, "  condition: segment type %s\n", rule->segment_type);
	if (frame >= 0) {
		mp_out_printf(out, "  matched frame %d: ", (int)frame);
		mp_block_put_frame(c->snap, frames, (size_t)frame, " at ", out);
		mp_out_putc(out, '\n');
	}
}

static void put_source(const mp_category_classifier *c, const mp_block_ref *r, const mp_category_why *why, mp_out *out)
{
	const mp_snapshot *snap = c->snap;
	const mp_block *b = &snap->blocks[r->block];

	switch (why->source) {
	case MP_CSRC_INACTIVE:
		mp_out_puts(out, "source: none: the block is free (inactive blocks are not categorised)\n");
		break;
	case MP_CSRC_OWNER:
		mp_out_printf(out, "source: the Python heap: the block holds %s (%s)\n", why->owner->name,
			      mp_owner_kind_name(why->owner->kind));
		break;
	case MP_CSRC_BLOCK:
		mp_out_puts(out, "source: data: the block's 'category' is ");
		mp_repr(snap->heap, mp_block_extra_value(snap, b, "category"), out);
		mp_out_putc(out, '\n');
		break;
	case MP_CSRC_TRACE:
		mp_out_printf(out, "source: data: its alloc trace entry (time_us %lld) has 'category' ",
			      (long long)snap->trace[why->trace].time_us);
		mp_repr(snap->heap, mp_trace_extra_value(snap, &snap->trace[why->trace], "category"), out);
		mp_out_putc(out, '\n');
		break;
	case MP_CSRC_RULE:
		mp_out_printf(out, "source: %s rule '%s'\n", why->user_rule ? "user" : "default", why->rule->name);
		put_conditions(c, why->rule, mp_block_frames(snap, b), why->frame, out);
		break;
	case MP_CSRC_UNKNOWN:
		mp_out_printf(out, "source: unknown: no 'category' in the data and none of the %zu rules (%zu user, "
			      "%zu default) matched\n", c->nuser + c->ndefaults, c->nuser, c->ndefaults);
		break;
	}
}

mp_err category_explain(mp_category_classifier *c, const mp_category_opts *o, mp_out *out)
{
	mp_block_ref *refs = NULL;
	size_t n = 0;
	mp_category_why why;
	mp_err err = mp_block_refs_collect(c->snap, holds_addr, o, &refs, &n, "categories", c->diag);
	mp_block_table t;

	if (err != MP_OK)
		return err;
	if (n == 0)
		return mp_fail(c->diag, MP_E_NOTFOUND, "categories: no block holds 0x%llx",
			       (unsigned long long)o->explain_addr);
	if ((err = mp_category_classify(c, &refs[0], &why)) == MP_OK) {
		mp_block_table_init(&t, c->snap, o->units, out);
		mp_block_table_heads(&t, true);
		mp_out_puts(out, "frame\n");
		mp_block_table_cells(&t, &refs[0], true);
		mp_block_table_frame(&t, &refs[0]);
		mp_block_table_free(&t);
		mp_out_printf(out, "category: %s\n",
			      why.source == MP_CSRC_INACTIVE ? "-"
							     : mp_category_name(mp_category_in(why.category, o->scheme), o->scheme));
		put_source(c, &refs[0], &why, out);
	}
	free(refs);
	return err;
}
