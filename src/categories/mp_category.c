/* mp_category.c - the categories report: bytes and blocks per category and device, as a
   plain or reStructuredText table or JSON. */
#include "mp_category.h"
#include "mp_array.h"

#include <stdlib.h>
#include <string.h>

#include "category_modes_int.h"
#include "mp_json.h"

/* What one device's active blocks add up to. */
struct device_sum {
	int64_t device;
	mp_i128 bytes[MP_CAT__COUNT];
	size_t blocks[MP_CAT__COUNT];
	mp_i128 free_bytes, active_bytes;
	size_t free_blocks, active_blocks;
};

struct report {
	const mp_snapshot *snap;
	const mp_category_opts *o;
	mp_out *out;
	mp_category_classifier cl;
	struct device_sum *sums;
	size_t nsums;
	bool first_block; /* JSON: no comma before the next block */
};

void mp_category_opts_init(mp_category_opts *o)
{
	memset(o, 0, sizeof *o);
	o->scheme = MP_SCHEME_PROFILER;
	o->units = MP_UNITS_AUTO;
	o->format = MP_CFMT_PLAIN;
	o->device = -1;
}

static bool keep_device(const mp_snapshot *snap, const mp_block_ref *r, const void *ctx)
{
	const mp_category_opts *o = ctx;

	(void)snap;
	return o->device < 0 || r->device == o->device;
}

static int cmp_sum(const void *pa, const void *pb)
{
	const struct device_sum *a = pa, *b = pb;

	return (a->device > b->device) - (a->device < b->device);
}

static struct device_sum *sum_of(struct report *rp, int64_t device)
{
	for (size_t i = 0; i < rp->nsums; i++)
		if (rp->sums[i].device == device)
			return &rp->sums[i];
	memset(&rp->sums[rp->nsums], 0, sizeof rp->sums[0]);
	rp->sums[rp->nsums].device = device;
	return &rp->sums[rp->nsums++];
}

static const char *source_word(enum mp_category_source s)
{
	static const char *const words[] = { "inactive", "owner", "block", "trace", "rule", "unknown" };

	return words[s];
}

/* JSON: one active block with its category and source. */
static void put_json_block(struct report *rp, const mp_block_ref *r, const mp_category_why *why)
{
	mp_out *out = rp->out;

	mp_out_puts(out, rp->first_block ? "\n    " : ",\n    ");
	rp->first_block = false;
	mp_out_printf(out, "{\"device\": %lld, \"address\": %lld, \"size\": %lld, \"state\": ", (long long)r->device,
		      (long long)r->address, (long long)r->size);
	mp_out_puts(out, r->state == MP_BS_ACTIVE_ALLOCATED ? "\"active_allocated\"" : "\"active_pending_free\"");
	mp_out_printf(out, ", \"category\": \"%s\", \"source\": \"%s\"",
		      mp_category_name(mp_category_in(why->category, rp->o->scheme), rp->o->scheme),
		      source_word(why->source));
	if (why->source == MP_CSRC_OWNER) {
		mp_out_puts(out, ", \"owner\": ");
		mp_json_put_string(out, why->owner->name, strlen(why->owner->name));
	}
	if (why->source == MP_CSRC_RULE) {
		mp_out_puts(out, ", \"rule\": ");
		mp_json_put_string(out, why->rule->name, strlen(why->rule->name));
		mp_out_printf(out, ", \"user_rule\": %s, \"frame\": %d", why->user_rule ? "true" : "false",
			      (int)why->frame);
	}
	mp_out_putc(out, '}');
}

/* Classify every block of the chosen devices into the sums (and, for --blocks, list them). */
static mp_err add_up(struct report *rp, const mp_block_ref *refs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct device_sum *s = sum_of(rp, refs[i].device);
		mp_category_why why;
		enum mp_category row;
		mp_err err = mp_category_classify(&rp->cl, &refs[i], &why);

		if (err != MP_OK)
			return err;
		if (why.source == MP_CSRC_INACTIVE) {
			s->free_bytes += refs[i].size;
			s->free_blocks++;
			continue;
		}
		row = mp_category_in(why.category, rp->o->scheme);
		s->bytes[row] += refs[i].size;
		s->blocks[row]++;
		s->active_bytes += refs[i].size;
		s->active_blocks++;
		if (rp->o->format == MP_CFMT_JSON && rp->o->blocks)
			put_json_block(rp, &refs[i], &why);
	}
	return MP_OK;
}

/* ---- text tables */

enum { COL_CATEGORY = 17, COL_BYTES = 16, COL_BLOCKS = 8 };

static void put_row(struct report *rp, mp_out *cell, const char *label, mp_i128 bytes, size_t blocks)
{
	mp_format_size(cell, bytes, rp->o->units);
	mp_out_printf(rp->out, "%-*s  %-*.*s  %zu\n", COL_CATEGORY, label, COL_BYTES, (int)cell->len, cell->data,
		      blocks);
	cell->len = 0;
}

/* reStructuredText's simple-table border (the form of MemTracker's tabular view). */
static void put_border(mp_out *out)
{
	static const char bar[] = "================";

	mp_out_printf(out, "%.*s=  %.*s  %.*s\n", COL_CATEGORY - 1, bar, COL_BYTES, bar, COL_BLOCKS, bar);
}

static void put_table(struct report *rp, const struct device_sum *s)
{
	bool rst = rp->o->format == MP_CFMT_RST;
	size_t nrows;
	const enum mp_category *rows = mp_category_rows(rp->o->scheme, &nrows);
	mp_out cell;

	mp_out_init(&cell);
	mp_out_printf(rp->out, "device %lld (%s categories)\n", (long long)s->device,
		      rp->o->scheme == MP_SCHEME_TRACKER ? "MemTracker" : "profiler");
	if (rst) {
		mp_out_putc(rp->out, '\n');
		put_border(rp->out);
	}
	mp_out_printf(rp->out, "%-*s  %-*s  %s\n", COL_CATEGORY, "category", COL_BYTES, "bytes", "blocks");
	if (rst)
		put_border(rp->out);
	for (size_t i = 0; i < nrows; i++)
		put_row(rp, &cell, mp_category_name(rows[i], rp->o->scheme), s->bytes[rows[i]], s->blocks[rows[i]]);
	put_row(rp, &cell, "active", s->active_bytes, s->active_blocks);
	put_row(rp, &cell, "inactive (free)", s->free_bytes, s->free_blocks);
	if (rst)
		put_border(rp->out);
	if (cell.err != MP_OK && rp->out->err == MP_OK)
		rp->out->err = cell.err;
	mp_out_free(&cell);
}

/* ---- JSON */

static void put_json_count(mp_out *out, const char *key, mp_i128 bytes, size_t blocks)
{
	mp_out_printf(out, "\"%s\": {\"bytes\": ", key);
	mp_format_i128(out, bytes);
	mp_out_printf(out, ", \"blocks\": %zu}", blocks);
}

static void put_json_device(struct report *rp, const struct device_sum *s, bool last)
{
	size_t nrows;
	const enum mp_category *rows = mp_category_rows(rp->o->scheme, &nrows);

	mp_out_printf(rp->out, "    {\"device\": %lld, \"categories\": {", (long long)s->device);
	for (size_t i = 0; i < nrows; i++) {
		mp_out_puts(rp->out, i ? ", " : "");
		put_json_count(rp->out, mp_category_name(rows[i], rp->o->scheme), s->bytes[rows[i]], s->blocks[rows[i]]);
	}
	mp_out_puts(rp->out, "}, ");
	put_json_count(rp->out, "active", s->active_bytes, s->active_blocks);
	mp_out_puts(rp->out, ", ");
	put_json_count(rp->out, "inactive", s->free_bytes, s->free_blocks);
	mp_out_puts(rp->out, last ? "}\n" : "},\n");
}

/* ---- the report */

static mp_err report_run(struct report *rp, mp_diag *diag)
{
	mp_block_ref *refs = NULL;
	size_t n = 0;
	bool json = rp->o->format == MP_CFMT_JSON;
	mp_err err = mp_block_refs_collect(rp->snap, keep_device, rp->o, &refs, &n, "categories", diag);

	if (err != MP_OK)
		return err;
	if (n == 0 && rp->o->device >= 0) {
		free(refs);
		return mp_fail(diag, MP_E_NOTFOUND, "categories: no blocks on device %lld", (long long)rp->o->device);
	}
	if ((rp->sums = calloc(n ? n : 1, sizeof *rp->sums)) == NULL) {
		free(refs);
		return mp_fail(diag, MP_E_NOMEM, "categories: out of memory");
	}
	if (json) {
		mp_out_printf(rp->out, "{\"scheme\": \"%s\"", rp->o->scheme == MP_SCHEME_TRACKER ? "tracker" : "profiler");
		if (rp->o->blocks)
			mp_out_puts(rp->out, ", \"blocks\": [");
	}
	rp->first_block = true;
	err = add_up(rp, refs, n);
	free(refs);
	if (err != MP_OK)
		return err;
	mp_sort(rp->sums, rp->nsums, sizeof *rp->sums, cmp_sum);
	if (json)
		mp_out_puts(rp->out, rp->o->blocks ? "\n  ],\n  \"devices\": [\n" : ",\n  \"devices\": [\n");
	for (size_t i = 0; i < rp->nsums; i++) {
		if (json) {
			put_json_device(rp, &rp->sums[i], i + 1 == rp->nsums);
			continue;
		}
		mp_out_puts(rp->out, i ? "\n" : "");
		put_table(rp, &rp->sums[i]);
	}
	if (json)
		mp_out_puts(rp->out, "  ]\n}\n");
	return MP_OK;
}

/* The table, or the one mode OPTS asks for instead. */
static mp_err run_mode(struct report *rp, mp_diag *diag)
{
	const mp_category_opts *o = rp->o;

	if ((int)o->explain + (o->sites > 0) + (int)o->segsum > 1)
		return mp_fail(diag, MP_E_USAGE, "categories: --explain, --sites and --segsum exclude each other");
	if (o->explain)
		return category_explain(&rp->cl, o, rp->out);
	if (o->sites > 0)
		return category_sites(&rp->cl, o, rp->out);
	if (o->segsum)
		return category_segsum(&rp->cl, o, rp->out);
	return report_run(rp, diag);
}

/* Whether any block of SNAP carries allocation frames: rules over frames need them. */
static bool any_frames(const mp_snapshot *snap)
{
	for (size_t i = 0; i < snap->nblocks; i++)
		if (mp_frames_len(snap, mp_block_frames(snap, &snap->blocks[i])) > 0)
			return true;
	return false;
}

mp_err mp_analysis_categories(const mp_snapshot *snap, const mp_category_opts *opts, mp_out *out, mp_diag *diag)
{
	struct report rp = { .snap = snap, .o = opts, .out = out };
	mp_err err = category_classifier_init(&rp.cl, snap, opts->rules, diag);

	if (err == MP_OK && opts->owners != NULL && (err = category_classifier_owners(&rp.cl, opts->owners)) != MP_OK)
		mp_fail(diag, err, "categories: out of memory");
	if (err == MP_OK)
		err = run_mode(&rp, diag);
	if (err == MP_OK && rp.cl.unreadable > 0)
		mp_warn(diag, "%zu block(s) carry a 'category' that names no category: rules decided them",
			rp.cl.unreadable);
	/* Said, since without frames or owners every block would be UNKNOWN without a word: a job that did
	   not call _record_memory_history, read from a snapshot file (no Python heap to read). */
	if (err == MP_OK && snap->nblocks > 0 && opts->owners == NULL && !any_frames(snap))
		mp_warn(diag, "no block carries allocation frames (recorded without _record_memory_history), so only "
			"'category' keys and rules without frame conditions can decide; on a core or a live process "
			"the Python heap's owners would");
	category_classifier_free(&rp.cl);
	free(rp.sums);
	return err == MP_OK ? mp_block_out_status(out, "categories", diag) : err;
}
