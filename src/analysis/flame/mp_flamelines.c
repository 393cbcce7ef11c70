/* mp_flamelines.c - folded stack lines of segments(), memory() and compare() (_write_blocks). */
#include "mp_flamelines.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_blocks.h"
#include "mp_format.h"
#include "mp_frame_filter.h"
#include "mp_table.h"

static const char non_python[] = "<non-python>";

/* One frame, formatted and filtered once per (hash-consed) frame-dict handle:
   distinct tracebacks are made of far fewer distinct frames. */
struct piece {
	mp_val frame;
	size_t off, len; /* in pieces_text */
	bool ok;         /* a frame dict */
	bool kept;       /* _frame_filter keeps it */
};

/* Text that only grows. */
struct text {
	char *s;
	size_t len, cap;
};

struct flame {
	const mp_snapshot *snap;
	const char *analysis;
	mp_out *out;
	mp_diag *diag;
	mp_table piece_index; /* pieces by frame handle */
	struct piece *pieces;
	size_t npieces, pieces_cap;
	struct text pieces_text;
	char prefix[128];
	size_t prefix_len;
};

static void flame_init(struct flame *f, const mp_snapshot *snap, const char *analysis, mp_out *out,
		       mp_diag *diag)
{
	memset(f, 0, sizeof *f);
	f->snap = snap;
	f->analysis = analysis;
	f->out = out;
	f->diag = diag;
}

static void flame_free(struct flame *f)
{
	mp_table_free(&f->piece_index);
	free(f->pieces);
	free(f->pieces_text.s);
}

static mp_err out_of_memory(struct flame *f)
{
	return mp_fail(f->diag, MP_E_NOMEM, "%s: out of memory", f->analysis);
}

/* ---- the frames, formatted once per frame */

static mp_err text_append(struct flame *f, struct text *t, const char *s, size_t n)
{
	if (n == 0)
		return MP_OK;
	if (n > t->cap - t->len) {
		size_t ncap = t->cap ? t->cap : 4096;
		char *na;

		while (ncap - t->len < n)
			ncap *= 2;
		na = realloc(t->s, ncap);
		if (na == NULL)
			return out_of_memory(f);
		t->s = na;
		t->cap = ncap;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	return MP_OK;
}

/* ---- frames */

/* _frame_fmt: "{basename}:{line}:{name}", basename = text after the last '/'. */
static mp_err format_frame(struct flame *f, struct text *t, const mp_frame *fr)
{
	const char *base = fr->filename;
	char line[24];
	int n;
	mp_err err;

	for (size_t i = 0; i < fr->filename_len; i++)
		if (fr->filename[i] == '/')
			base = fr->filename + i + 1;
	n = snprintf(line, sizeof line, ":%lld:", (long long)fr->line);
	err = text_append(f, t, base, fr->filename_len - (size_t)(base - fr->filename));
	if (err == MP_OK)
		err = text_append(f, t, line, (size_t)n);
	if (err == MP_OK)
		err = text_append(f, t, fr->name, fr->name_len);
	return err;
}

/* The piece of frame I of FRAMES (its index in *ID), made the first time its frame dict is seen. */
static mp_err piece_of(struct flame *f, mp_val frames, size_t i, uint32_t *id)
{
	mp_val frame = mp_heap_items(f->snap->heap, frames)[i];
	mp_table_probe p;
	struct piece *pc;
	mp_frame fr;
	mp_err err;

	*id = mp_table_find_u64(&f->piece_index, frame, f->pieces, sizeof *f->pieces, offsetof(struct piece, frame), &p);
	if (*id != MP_TABLE_NONE)
		return MP_OK;
	if (mp_array_grow((void **)&f->pieces, &f->pieces_cap, f->npieces + 1, sizeof *f->pieces) != MP_OK)
		return out_of_memory(f);
	pc = &f->pieces[f->npieces];
	*pc = (struct piece){ .frame = frame, .off = f->pieces_text.len };
	pc->ok = mp_frames_get(f->snap, frames, i, &fr);
	pc->kept = pc->ok && mp_frame_kept(&fr);
	if (pc->kept && (err = format_frame(f, &f->pieces_text, &fr)) != MP_OK)
		return err;
	pc->len = f->pieces_text.len - pc->off;
	if ((err = mp_table_add(&f->piece_index, &p, (uint32_t)f->npieces)) != MP_OK)
		return mp_fail(f->diag, err, "%s: %s", f->analysis, mp_strerror(err));
	*id = (uint32_t)f->npieces++;
	return MP_OK;
}

/* ---- lines */

static void set_prefix(struct flame *f, const char *tag, const mp_segment *seg, bool with_address)
{
	int n = snprintf(f->prefix, sizeof f->prefix, "%s%sstream_%lld", tag, tag[0] ? ";" : "",
			 (long long)seg->stream);

	if (with_address)
		n += snprintf(f->prefix + n, sizeof f->prefix - (size_t)n, ";seg_%lld", (long long)seg->address);
	f->prefix_len = (size_t)n;
}

/* Make room for a line whose {what} takes WHAT_LEN bytes and write "{prefix};{state};" into
   it; returns where {what} goes (NULL after an output error). One reservation per line:
   hundreds of thousands of lines, each of seven pieces. */
static char *line_begin(struct flame *f, const mp_block *b, size_t what_len)
{
	size_t state_len = 0;
	const char *state = mp_heap_atom(f->snap->heap, b->state, &state_len);
	char *p = mp_out_reserve(f->out, f->prefix_len + state_len + what_len + MP_I128_CHARS + 4);

	if (p == NULL)
		return NULL;
	memcpy(p, f->prefix, f->prefix_len);
	p += f->prefix_len;
	*p++ = ';';
	if (state_len > 0)
		memcpy(p, state, state_len);
	p += state_len;
	*p++ = ';';
	return p;
}

/* " {n}\n" at P, ending the line that began at the output's end. */
static void line_end(struct flame *f, char *p, mp_i128 n)
{
	*p++ = ' ';
	p += mp_format_i128_to(p, n);
	*p++ = '\n';
	f->out->len = (size_t)(p - f->out->data);
}

/* "{prefix};{state};{what} {n}\n" */
static void put_line(struct flame *f, const mp_block *b, const char *what, size_t what_len, mp_i128 n)
{
	char *p = line_begin(f, b, what_len);

	if (p == NULL)
		return;
	if (what_len > 0)
		memcpy(p, what, what_len);
	line_end(f, p + what_len, n);
}

/* Piece ids kept from measuring a line to writing it (a longer traceback looks the rest up again). */
#define LINE_FRAMES 64

/* The line of a block whose {what} is frames_fragment(FRAMES): "<non-python>" for no
   frames, else the kept frames, outermost first, ';'-joined, each formatted once. */
static mp_err put_frames_line(struct flame *f, const mp_block *b, mp_val frames, mp_i128 n)
{
	uint32_t ids[LINE_FRAMES], id = 0;
	size_t nframes, len = 0, kept = 0;
	char *p;
	mp_err err;

	if (frames != MP_ABSENT && mp_val_type(frames) != MP_T_LIST)
		return mp_fail(f->diag, MP_E_TYPE, "%s: 'frames' is not a list", f->analysis);
	if (frames == MP_ABSENT || (nframes = mp_frames_len(f->snap, frames)) == 0) {
		put_line(f, b, non_python, sizeof non_python - 1, n);
		return MP_OK;
	}
	for (size_t j = 0; j < nframes; j++) { /* j-th outermost: frame nframes - 1 - j */
		if ((err = piece_of(f, frames, nframes - 1 - j, &id)) != MP_OK)
			return err;
		if (!f->pieces[id].ok)
			return mp_fail(f->diag, MP_E_TYPE, "%s: frame %zu of a traceback is not a frame dict",
				       f->analysis, nframes - 1 - j);
		if (j < LINE_FRAMES)
			ids[j] = id;
		if (f->pieces[id].kept)
			len += f->pieces[id].len + (kept++ > 0);
	}
	if ((p = line_begin(f, b, len)) == NULL)
		return MP_OK;
	kept = 0;
	for (size_t j = 0; j < nframes; j++) {
		const struct piece *pc;

		if (j < LINE_FRAMES)
			id = ids[j];
		else if ((err = piece_of(f, frames, nframes - 1 - j, &id)) != MP_OK)
			return err;
		pc = &f->pieces[id];
		if (!pc->kept)
			continue;
		if (kept++ > 0)
			*p++ = ';';
		memcpy(p, f->pieces_text.s + pc->off, pc->len);
		p += pc->len;
	}
	line_end(f, p, n);
	return MP_OK;
}

/* A legacy block: a line per history record; returns the bytes they account for. */
static mp_err put_history(struct flame *f, const mp_block *b, const mp_block_at *at, mp_i128 *accounted)
{
	static const char no_context[] = "<no-context>";
	size_t n = mp_block_history_len(f->snap, b);

	*accounted = 0;
	for (size_t i = 0; i < n; i++) {
		mp_history_item h;
		mp_err err = mp_block_history_get(f->snap, b, i, &h, at, f->diag);

		if (err == MP_OK && h.frames != MP_ABSENT)
			err = put_frames_line(f, b, h.frames, h.real_size);
		else if (err == MP_OK)
			put_line(f, b, no_context, sizeof no_context - 1, h.real_size);
		if (err != MP_OK)
			return err;
		*accounted += h.real_size;
	}
	return MP_OK;
}

/* _write_blocks for one segment, with the prefix already set. */
static mp_err write_blocks(struct flame *f, const mp_segment *seg, size_t segi)
{
	static const char gaps[] = "<gaps>";
	const mp_block *blocks = mp_segment_blocks(f->snap, seg);

	for (size_t i = 0; i < seg->nblocks; i++) {
		const mp_block *b = &blocks[i];
		mp_block_at at = { f->analysis, segi, i };
		mp_i128 accounted;
		mp_err err;

		if (b->present & MP_F_BLK_HISTORY) {
			err = put_history(f, b, &at, &accounted);
		} else {
			mp_val frames;
			int64_t size = 0;

			err = mp_block_extra(f->snap, b, &frames, &size, &at, f->diag);
			if (err == MP_OK)
				err = put_frames_line(f, b, frames, size);
			accounted = size;
		}
		if (err != MP_OK)
			return err;
		if (b->size != accounted)
			put_line(f, b, gaps, sizeof gaps - 1, (mp_i128)b->size - accounted);
	}
	return MP_OK;
}

static mp_err finish(struct flame *f, mp_err err)
{
	if (err == MP_OK && f->out->err != MP_OK)
		err = mp_fail(f->diag, f->out->err, "%s: cannot write the output: %s", f->analysis,
			      mp_strerror(f->out->err));
	flame_free(f);
	return err;
}

static mp_err write_all(const mp_snapshot *snap, const char *analysis, bool with_address, mp_out *out,
			mp_diag *diag)
{
	struct flame f;
	mp_err err = MP_OK;

	flame_init(&f, snap, analysis, out, diag);
	for (size_t i = 0; err == MP_OK && i < snap->nsegments; i++) {
		set_prefix(&f, "", &snap->segments[i], with_address);
		err = write_blocks(&f, &snap->segments[i], i);
	}
	return finish(&f, err);
}

mp_err mp_analysis_segments(const mp_snapshot *snap, mp_out *out, mp_diag *diag)
{
	return write_all(snap, "segments", true, out, diag);
}

mp_err mp_analysis_memory(const mp_snapshot *snap, mp_out *out, mp_diag *diag)
{
	return write_all(snap, "memory", false, out, diag);
}

/* ---- compare */

/* _seg_key(seg) = (address, total_size). */
struct seg_id {
	int64_t address, total_size;
};

static int cmp_seg_id(const void *pa, const void *pb)
{
	const struct seg_id *a = pa, *b = pb;

	if (a->address != b->address)
		return a->address < b->address ? -1 : 1;
	return (a->total_size > b->total_size) - (a->total_size < b->total_size);
}

/* The set of SNAP's keys: sorted, without duplicates. */
static mp_err seg_id_set(const mp_snapshot *snap, struct seg_id **out, size_t *n, mp_diag *diag)
{
	struct seg_id *ids = malloc((snap->nsegments ? snap->nsegments : 1) * sizeof *ids);
	size_t m = 0;

	if (ids == NULL)
		return mp_fail(diag, MP_E_NOMEM, "compare: out of memory");
	for (size_t i = 0; i < snap->nsegments; i++)
		ids[i] = (struct seg_id){ snap->segments[i].address, snap->segments[i].total_size };
	mp_sort(ids, snap->nsegments, sizeof *ids, cmp_seg_id);
	for (size_t i = 0; i < snap->nsegments; i++)
		if (m == 0 || cmp_seg_id(&ids[m - 1], &ids[i]) != 0)
			ids[m++] = ids[i];
	*out = ids;
	*n = m;
	return MP_OK;
}

static bool seg_id_in(const struct seg_id *ids, size_t n, const mp_segment *seg)
{
	struct seg_id key = { seg->address, seg->total_size };

	return bsearch(&key, ids, n, sizeof *ids, cmp_seg_id) != NULL;
}

/* "LABEL = [a, b, ...]\n": addresses of the keys of MINE missing from OTHER. */
static void write_only(mp_out *out, const char *label, const struct seg_id *mine, size_t nmine,
		       const struct seg_id *other, size_t nother)
{
	bool first = true;

	mp_out_puts(out, label);
	mp_out_puts(out, " = [");
	for (size_t i = 0; i < nmine; i++) {
		if (bsearch(&mine[i], other, nother, sizeof *other, cmp_seg_id) != NULL)
			continue;
		if (!first)
			mp_out_puts(out, ", ");
		mp_out_i64(out, mine[i].address);
		first = false;
	}
	mp_out_puts(out, "]\n");
}

/* The blocks of SNAP's segments whose key OTHER lacks, prefixed with TAG
   (messages name the side: "compare before: segments[3]..."). */
static mp_err write_only_blocks(const mp_snapshot *snap, const char *tag, const char *side,
				const struct seg_id *other, size_t nother, mp_out *out, mp_diag *diag)
{
	struct flame f;
	mp_err err = MP_OK;

	flame_init(&f, snap, side, out, diag);
	for (size_t i = 0; err == MP_OK && i < snap->nsegments; i++) {
		if (seg_id_in(other, nother, &snap->segments[i]))
			continue;
		set_prefix(&f, tag, &snap->segments[i], true);
		err = write_blocks(&f, &snap->segments[i], i);
	}
	return finish(&f, err);
}

mp_err mp_analysis_compare(const mp_snapshot *before, const mp_snapshot *after, mp_out *summary,
			   mp_out *folded, mp_diag *diag)
{
	struct seg_id *b_ids = NULL, *a_ids = NULL;
	size_t nb = 0, na = 0;
	mp_err err = seg_id_set(before, &b_ids, &nb, diag);

	if (err == MP_OK)
		err = seg_id_set(after, &a_ids, &na, diag);
	if (err == MP_OK) {
		write_only(summary, "only_before", b_ids, nb, a_ids, na);
		write_only(summary, "only_after", a_ids, na, b_ids, nb);
		if (summary->err != MP_OK)
			err = mp_fail(diag, summary->err, "compare: cannot write the output: %s",
				      mp_strerror(summary->err));
	}
	if (err == MP_OK)
		err = write_only_blocks(before, "only_before", "compare before", a_ids, na, folded, diag);
	if (err == MP_OK)
		err = write_only_blocks(after, "only_after", "compare after", b_ids, nb, folded, diag);
	free(b_ids);
	free(a_ids);
	return err;
}
