/* category_segsum.c - `categories --segsum`: _memory_viz segsum's page map (mp_segsum.c draws
   it, so the free pages and every other line are segsum's own), with each page that is not
   free drawn as the letter of the category with the most allocated bytes in it. */
#include <stdlib.h>
#include <string.h>

#include "category_modes_int.h"
#include "mp_segsum_hooks.h"

struct painter {
	mp_category_classifier *cl;
	const mp_category_opts *o;
	uint8_t *row;   /* per block of the snapshot: its category as the scheme shows it */
	int64_t *bytes; /* per page and category: the allocated bytes segsum counted there */
	uint8_t *order; /* per page and category: 0, or 1 + how many categories the page met before */
	uint8_t *nmet;  /* per page: how many categories it met */
	size_t cap;     /* pages the arrays hold */
	size_t nsegments;
};

/* Whether segment SEGI is on the chosen device. */
static bool segment_kept(const struct painter *p, size_t segi)
{
	const mp_segment *seg = &p->cl->snap->segments[segi];

	return p->o->device < 0 || ((seg->present & MP_F_SEG_DEVICE) && seg->device == p->o->device);
}

static bool keep_segment(void *ctx, size_t segi)
{
	return segment_kept(ctx, segi);
}

static mp_err begin(void *ctx, size_t segi, size_t npages)
{
	struct painter *p = ctx;

	(void)segi;
	if (npages > p->cap) {
		free(p->bytes);
		free(p->order);
		free(p->nmet);
		p->bytes = calloc(npages * MP_CAT__COUNT, sizeof *p->bytes);
		p->order = calloc(npages * MP_CAT__COUNT, 1);
		p->nmet = calloc(npages, 1);
		p->cap = p->bytes && p->order && p->nmet ? npages : 0;
		if (p->cap == 0)
			return mp_fail(p->cl->diag, MP_E_NOMEM, "categories: out of memory for %zu pages", npages);
		return MP_OK;
	}
	memset(p->bytes, 0, npages * MP_CAT__COUNT * sizeof *p->bytes);
	memset(p->order, 0, npages * MP_CAT__COUNT);
	memset(p->nmet, 0, npages);
	return MP_OK;
}

static void touch(void *ctx, size_t page, size_t block, int64_t bytes)
{
	struct painter *p = ctx;
	size_t at = page * MP_CAT__COUNT + p->row[block];

	p->bytes[at] += bytes;
	if (p->order[at] == 0)
		p->order[at] = ++p->nmet[page];
}

/* The category with the most bytes in PAGE; ties go to the one the page met first (so a page
   segsum marks for a zero-byte range still shows that range's category). */
static char page_letter(const struct painter *p, size_t page)
{
	const int64_t *bytes = &p->bytes[page * MP_CAT__COUNT];
	const uint8_t *order = &p->order[page * MP_CAT__COUNT];
	int best = -1;

	for (int c = 0; c < MP_CAT__COUNT; c++)
		if (order[c] != 0 &&
		    (best < 0 || bytes[c] > bytes[best] || (bytes[c] == bytes[best] && order[c] < order[best])))
			best = c;
	return best < 0 ? '?' : mp_category_letter((enum mp_category)best);
}

static void paint(void *ctx, char *map, size_t npages)
{
	const struct painter *p = ctx;

	for (size_t i = 0; i < npages; i++)
		map[i] = map[i] == ' ' ? '.' : page_letter(p, i);
}

static void legend(void *ctx, mp_out *out)
{
	const struct painter *p = ctx;
	size_t nrows;
	const enum mp_category *rows = mp_category_rows(p->o->scheme, &nrows);

	mp_out_puts(out, "\nLegend:");
	for (size_t i = 0; i < nrows; i++)
		mp_out_printf(out, " %c %s", mp_category_letter(rows[i]), mp_category_name(rows[i], p->o->scheme));
	mp_out_puts(out, " . free\n"
			 "    one character a page of 20.0MiB: the category with the most allocated bytes in it;\n"
			 "    free pages are segsum's (pending frees count as free)\n");
}

static bool keep_block(const mp_snapshot *snap, const mp_block_ref *r, const void *ctx)
{
	(void)snap;
	return segment_kept(ctx, r->seg);
}

/* The category of every block of the kept segments, indexed as snap->blocks. */
static mp_err classify_all(struct painter *p)
{
	const mp_snapshot *snap = p->cl->snap;
	mp_block_ref *refs = NULL;
	size_t n = 0;
	mp_err err = mp_block_refs_collect(snap, keep_block, p, &refs, &n, "categories", p->cl->diag);

	for (size_t i = 0; i < snap->nsegments; i++)
		p->nsegments += segment_kept(p, i);
	if (err == MP_OK && (p->row = calloc(snap->nblocks ? snap->nblocks : 1, 1)) == NULL)
		err = mp_fail(p->cl->diag, MP_E_NOMEM, "categories: out of memory");
	for (size_t i = 0; err == MP_OK && i < n; i++) {
		mp_category_why why;

		if ((err = mp_category_classify(p->cl, &refs[i], &why)) == MP_OK)
			p->row[refs[i].block] = (uint8_t)mp_category_in(why.category, p->o->scheme);
	}
	free(refs);
	return err;
}

mp_err category_segsum(mp_category_classifier *c, const mp_category_opts *o, mp_out *out)
{
	struct painter p = { .cl = c, .o = o };
	const mp_segsum_hooks h = {
		.what = "categories", .ctx = &p, .keep = keep_segment, .begin = begin,
		.touch = touch, .paint = paint, .legend = legend,
	};
	mp_err err = classify_all(&p);

	if (err == MP_OK && o->device >= 0 && p.nsegments == 0)
		err = mp_fail(c->diag, MP_E_NOTFOUND, "categories: no segments on device %lld", (long long)o->device);
	if (err == MP_OK)
		err = mp_segsum_run(c->snap, &h, out, c->diag);
	free(p.row);
	free(p.bytes);
	free(p.order);
	free(p.nmet);
	return err;
}
