/* mp_segsum.c - `stats`: segsum()'s page map of every segment, then the totals and legend. */
#include "mp_segsum.h"
#include "mp_array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_blocks.h"
#include "mp_format.h"
#include "mp_segsum_hooks.h"

#define PAGE_SIZE ((int64_t)20 << 20)

static const char header[] = "Summary of segments >= 20.0MiB in size\n";

static const char legend[] = "\n"
			     "Legend:\n"
			     "    [a     ] - a segment in the allocator\n"
			     "     ^-- a page 20.0MiB of memory in the segment\n"
			     "    a-z: pages filled with a single block's content\n"
			     "    ' ': page is completely free\n"
			     "    *: page if completely full with multiple blocks\n"
			     "    0-9: page is partially full with tensors of multiple blocks (9 == 90% full)\n"
			     "    (X% internal) - of the free memory, X% is free because we rounded the size "
			     "of the allocation.\n";

/* The sort key of a segment: (total_size, calc_active), then list position,
   which makes qsort stable like Python's sorted(). */
struct seg_key {
	int64_t total_size;
	mp_i128 active;
	size_t index;
};

struct segsum {
	const mp_snapshot *snap;
	const mp_keys *k;
	const mp_segsum_hooks *h;
	const char *what;
	mp_out *out;
	mp_diag *diag;
	char *occupied; /* one page map, reused by every segment */
	double *frac;
	size_t pages_cap;
	uint64_t work_left; /* page visits still allowed */
	size_t nkept;       /* segments summed up */
	mp_i128 total_reserved, total_allocated, free_external, free_internal;
};

/* Python's // on ints: rounds toward minus infinity. */
static mp_i128 floor_div(mp_i128 a, mp_i128 b)
{
	mp_i128 q;

	/* 128-bit division is a library call; a block's offsets fit 64 bits. */
	if (a >= INT64_MIN && a <= INT64_MAX && b >= INT64_MIN && b <= INT64_MAX && b != -1) {
		int64_t q64 = (int64_t)a / (int64_t)b;

		return ((int64_t)a % (int64_t)b != 0 && (a < 0) != (b < 0)) ? (mp_i128)q64 - 1 : q64;
	}
	q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* nseg = (total_size - 1) // PAGE_SIZE + 1; a list of negative length is empty. */
static int64_t page_count(int64_t total_size)
{
	mp_i128 n = floor_div((mp_i128)total_size - 1, PAGE_SIZE) + 1;

	return n < 0 ? 0 : (int64_t)n;
}

static bool is_active_allocated(const struct segsum *s, const mp_block *b)
{
	return mp_val_is(b->state, s->k->active_allocated);
}

static int cmp_seg_key(const void *pa, const void *pb)
{
	const struct seg_key *a = pa, *b = pb;

	if (a->total_size != b->total_size)
		return a->total_size < b->total_size ? -1 : 1;
	if (a->active != b->active)
		return a->active < b->active ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* calc_active(seg): Σ size of its active_allocated blocks. */
static mp_i128 calc_active(const struct segsum *s, const mp_segment *seg)
{
	const mp_block *b = mp_segment_blocks(s->snap, seg);
	mp_i128 sum = 0;

	for (size_t i = 0; i < seg->nblocks; i++)
		if (is_active_allocated(s, &b[i]))
			sum += b[i].size;
	return sum;
}

/* The segments the hooks keep, in segsum's order, into *OUT and S->nkept. */
static mp_err sorted_keys(struct segsum *s, struct seg_key **out)
{
	size_t n = s->snap->nsegments;
	struct seg_key *keys = malloc((n ? n : 1) * sizeof *keys);

	if (keys == NULL)
		return mp_fail(s->diag, MP_E_NOMEM, "%s: out of memory", s->what);
	s->nkept = 0;
	for (size_t i = 0; i < n; i++) {
		if (s->h->keep != NULL && !s->h->keep(s->h->ctx, i))
			continue;
		keys[s->nkept].total_size = s->snap->segments[i].total_size;
		keys[s->nkept].active = calc_active(s, &s->snap->segments[i]);
		keys[s->nkept++].index = i;
	}
	mp_sort(keys, s->nkept, sizeof *keys, cmp_seg_key);
	*out = keys;
	return MP_OK;
}

/* Size the page-map scratch for the largest segment and the work budget:
   ranges that do not overlap visit at most one page per range plus one per
   page, so four times that leaves a wide margin for legitimate input. */
static mp_err prepare_pages(struct segsum *s)
{
	uint64_t pages_total = 0;
	int64_t most = 1;

	for (size_t i = 0; i < s->snap->nsegments; i++) {
		int64_t n = page_count(s->snap->segments[i].total_size);

		if (n > MP_SEGSUM_MAX_PAGES)
			return mp_fail(s->diag, MP_E_LIMIT,
				       "%s: segments[%zu]: total_size %lld means more than %lld pages of 20 MiB",
				       s->what, i, (long long)s->snap->segments[i].total_size,
				       (long long)MP_SEGSUM_MAX_PAGES);
		pages_total += (uint64_t)n;
		if (n > most)
			most = n;
	}
	if (pages_total > MP_SEGSUM_MAX_TOTAL_PAGES)
		return mp_fail(s->diag, MP_E_LIMIT, "%s: the segments add up to more than %llu pages of 20 MiB",
			       s->what, (unsigned long long)MP_SEGSUM_MAX_TOTAL_PAGES);
	s->work_left = 4 * ((uint64_t)s->snap->nblocks + pages_total) + 1024;
	s->pages_cap = (size_t)most;
	s->occupied = malloc(s->pages_cap);
	s->frac = malloc(s->pages_cap * sizeof *s->frac);
	if (s->occupied == NULL || s->frac == NULL)
		return mp_fail(s->diag, MP_E_NOMEM, "%s: out of memory for a page map of %zu pages",
			       s->what, s->pages_cap);
	return MP_OK;
}

/* Python's list index: negative J counts from the end; outside, IndexError. */
static bool page_index(mp_i128 j, int64_t npages, size_t *idx)
{
	if (j < 0)
		j += npages;
	if (j < 0 || j >= npages)
		return false;
	*idx = (size_t)j;
	return true;
}

/* Add ADD to page IDX's fill and mark it: the range's letter on a free page,
   else the fill decile '0123456789*'[int(frac * 10)] (Python indexing rules). */
static bool mark_page(struct segsum *s, size_t idx, double add, char letter)
{
	double tenths;
	long digit;

	s->frac[idx] += add;
	if (s->occupied[idx] == ' ') {
		s->occupied[idx] = letter;
		return true;
	}
	tenths = s->frac[idx] * 10;
	if (!(tenths > -12.0 && tenths < 11.0))
		return false;
	digit = (long)tenths;
	if (digit < 0)
		digit += 11;
	s->occupied[idx] = "0123456789*"[digit];
	return true;
}

/* Mark the pages of the I-th active range [START, START + SIZE) of segment SEGI, which is
   block BLOCK's (index in snap->blocks). */
static mp_err mark_range(struct segsum *s, size_t segi, int64_t npages, size_t i, size_t block, mp_i128 start,
			 int64_t size)
{
	mp_i128 end = start + size;
	mp_i128 first = floor_div(start, PAGE_SIZE), stop = floor_div(end - 1, PAGE_SIZE) + 1;
	char letter = (char)('a' + (int)(i % 26));

	for (mp_i128 j = first; j < stop; j++) {
		mp_i128 lo = start > j * PAGE_SIZE ? start : j * PAGE_SIZE;
		mp_i128 hi = end < (j + 1) * PAGE_SIZE ? end : (j + 1) * PAGE_SIZE;
		size_t idx;

		if (s->work_left-- == 0)
			return mp_fail(s->diag, MP_E_LIMIT,
				       "%s: segments[%zu]: overlapping block ranges make the page map too costly",
				       s->what, segi);
		/* |hi - lo| <= PAGE_SIZE, so both operands are exact doubles, as in Python. */
		if (!page_index(j, npages, &idx) ||
		    !mark_page(s, idx, (double)(hi - lo) / (double)PAGE_SIZE, letter))
			return mp_fail(s->diag, MP_E_CORRUPT,
				       "%s: segments[%zu]: block range %zu runs outside the segment's pages",
				       s->what, segi, i);
		if (s->h->touch != NULL)
			s->h->touch(s->h->ctx, idx, block, (int64_t)(hi - lo));
	}
	return MP_OK;
}

static void write_segment_line(struct segsum *s, const mp_segment *seg, int64_t npages, mp_i128 external,
			       mp_i128 internal)
{
	mp_out_putc(s->out, '[');
	mp_out_write(s->out, s->occupied, (size_t)npages);
	mp_out_puts(s->out, "] ");
	mp_format_bytes(s->out, seg->total_size);
	mp_out_puts(s->out, " allocated, ");
	mp_format_report_free(s->out, external, internal);
	mp_out_puts(s->out, " free");
	if (seg->stream != 0) {
		mp_out_puts(s->out, " stream_");
		mp_out_i64(s->out, seg->stream);
	}
	mp_out_putc(s->out, '\n');
}

/* One segment of the sorted list: its free/allocated split, page map and line. */
static mp_err summarize_segment(struct segsum *s, size_t segi)
{
	const mp_segment *seg = &s->snap->segments[segi];
	const mp_block *blocks = mp_segment_blocks(s->snap, seg);
	int64_t npages = page_count(seg->total_size);
	mp_i128 external = 0, internal = 0, allocated = 0, offset = 0;
	size_t nranges = 0;
	mp_err err;

	memset(s->occupied, ' ', (size_t)npages);
	memset(s->frac, 0, (size_t)npages * sizeof *s->frac);
	if (s->h->begin != NULL && (err = s->h->begin(s->h->ctx, segi, (size_t)npages)) != MP_OK)
		return err;
	for (size_t i = 0; i < seg->nblocks; i++) {
		const mp_block *b = &blocks[i];
		mp_block_at at = { s->what, segi, i };
		mp_val frames;
		int64_t a;

		if (is_active_allocated(s, b)) {
			err = mp_block_extra(s->snap, b, &frames, &a, &at, s->diag);
			if (err == MP_OK)
				err = mark_range(s, segi, npages, nranges++, seg->first_block + i, offset, a);
			if (err != MP_OK)
				return err;
			allocated += a;
			internal += (mp_i128)b->size - a;
		} else {
			external += b->size;
		}
		offset += b->size;
	}
	if (offset != seg->total_size)
		return mp_fail(s->diag, MP_E_CORRUPT,
			       "%s: segments[%zu]: its block sizes add up to a total other than total_size %lld",
			       s->what, segi, (long long)seg->total_size);
	s->total_reserved += seg->total_size;
	s->total_allocated += allocated;
	s->free_external += external;
	s->free_internal += internal;
	if (seg->total_size < PAGE_SIZE)
		return MP_OK;
	if (s->h->paint != NULL)
		s->h->paint(s->h->ctx, s->occupied, (size_t)npages);
	write_segment_line(s, seg, npages, external, internal);
	return MP_OK;
}

static void write_totals(struct segsum *s)
{
	mp_out_puts(s->out, "segments: ");
	mp_out_u64(s->out, s->nkept);
	mp_out_puts(s->out, "\ntotal_reserved: ");
	mp_format_bytes(s->out, s->total_reserved);
	mp_out_puts(s->out, "\ntotal_allocated: ");
	mp_format_bytes(s->out, s->total_allocated);
	mp_out_puts(s->out, "\ntotal_free: ");
	mp_format_report_free(s->out, s->free_external, s->free_internal);
	mp_out_putc(s->out, '\n');
	if (s->h->legend != NULL)
		s->h->legend(s->h->ctx, s->out);
	else
		mp_out_write(s->out, legend, sizeof legend - 1);
}

mp_err mp_segsum_run(const mp_snapshot *snap, const mp_segsum_hooks *h, mp_out *out, mp_diag *diag)
{
	struct segsum s = { .snap = snap, .k = mp_heap_keys(snap->heap), .h = h, .what = h->what,
			    .out = out, .diag = diag };
	struct seg_key *keys = NULL;
	mp_err err = prepare_pages(&s);

	if (err == MP_OK)
		err = sorted_keys(&s, &keys);
	if (err == MP_OK)
		mp_out_write(out, header, sizeof header - 1);
	for (size_t i = 0; err == MP_OK && i < s.nkept; i++)
		err = summarize_segment(&s, keys[i].index);
	if (err == MP_OK)
		write_totals(&s);
	free(keys);
	free(s.occupied);
	free(s.frac);
	if (err == MP_OK && out->err != MP_OK)
		err = mp_fail(diag, out->err, "%s: cannot write the output: %s", s.what, mp_strerror(out->err));
	return err;
}

mp_err mp_analysis_segsum(const mp_snapshot *snap, mp_out *out, mp_diag *diag)
{
	static const mp_segsum_hooks plain = { .what = "stats" };

	return mp_segsum_run(snap, &plain, out, diag);
}
