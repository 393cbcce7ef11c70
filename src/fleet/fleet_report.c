/* fleet_report.c - the fleet's report as plain text or reStructuredText: every rank's figures side by side, the
   outliers and why, each outlier's differences from the median rank by module and by call site, the bytes by
   category of every rank, and what the ranks that ran out of memory left. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fleet_int.h"
#include "mp_array.h"

bool mp_fleet_format_parse(const char *text, enum mp_fleet_format *out)
{
	static const char *const names[] = { "plain", "rst", "json", "html" };

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcasecmp(text, names[i]) == 0) {
			*out = (enum mp_fleet_format)i;
			return true;
		}
	return false;
}

/* ---- tables: cells in rows, each column as wide as its widest cell */

struct grid {
	char **cell; /* row-major; NULL: empty */
	size_t ncols, nrows, cap;
	bool right[16]; /* a column of numbers: aligned right */
	mp_out scratch;
};

static void grid_init(struct grid *g, size_t ncols)
{
	memset(g, 0, sizeof *g);
	g->ncols = ncols;
	mp_out_init(&g->scratch);
}

static void grid_free(struct grid *g)
{
	for (size_t i = 0; i < g->nrows * g->ncols; i++)
		free(g->cell[i]);
	free(g->cell);
	mp_out_free(&g->scratch);
}

/* Start a row; its cells come from grid_cell. False when out of memory. */
static bool grid_row(struct grid *g)
{
	if (mp_array_grow((void **)&g->cell, &g->cap, (g->nrows + 1) * g->ncols, sizeof *g->cell) != MP_OK)
		return false;
	memset(g->cell + g->nrows * g->ncols, 0, g->ncols * sizeof *g->cell);
	g->nrows++;
	return true;
}

/* The scratch text (what the caller wrote into g->scratch) as cell COL of the last row. */
static void grid_take(struct grid *g, size_t col)
{
	size_t len;

	free(g->cell[(g->nrows - 1) * g->ncols + col]);
	g->cell[(g->nrows - 1) * g->ncols + col] = mp_out_take(&g->scratch, &len);
}

static void grid_text(struct grid *g, size_t col, const char *s)
{
	mp_out_puts(&g->scratch, s);
	grid_take(g, col);
}

static void grid_size(struct grid *g, size_t col, double bytes, enum mp_units u)
{
	mp_format_size(&g->scratch, (mp_i128)(bytes + 0.5), u);
	grid_take(g, col);
}

/* The width of column COL in characters (UTF-8 continuation bytes not counted). */
static size_t grid_width(const struct grid *g, size_t col)
{
	size_t w = 0;

	for (size_t r = 0; r < g->nrows; r++) {
		const char *s = g->cell[r * g->ncols + col];
		size_t n = 0;

		for (; s != NULL && *s != '\0'; s++)
			n += ((unsigned char)*s & 0xc0) != 0x80;
		if (n > w)
			w = n;
	}
	return w;
}

static void pad(mp_out *out, size_t n, char c)
{
	while (n-- > 0)
		mp_out_putc(out, c);
}

/* The table (its first row the header), plain or as an rst simple table. */
static void grid_print(const struct grid *g, bool rst, mp_out *out)
{
	size_t w[16];

	for (size_t c = 0; c < g->ncols; c++)
		w[c] = grid_width(g, c) > 0 ? grid_width(g, c) : 1;
	for (size_t r = 0; r < g->nrows; r++) {
		for (size_t c = 0; rst && (r == 0 || r == 1) && c < g->ncols; c++) {
			pad(out, w[c], '=');
			mp_out_puts(out, c + 1 < g->ncols ? "  " : "\n");
		}
		for (size_t c = 0; c < g->ncols; c++) {
			const char *s = g->cell[r * g->ncols + c] != NULL ? g->cell[r * g->ncols + c] : "";
			bool last = c + 1 == g->ncols;
			size_t n = 0;

			for (const char *p = s; *p != '\0'; p++)
				n += ((unsigned char)*p & 0xc0) != 0x80;
			if (g->right[c])
				pad(out, w[c] - n, ' ');
			mp_out_puts(out, s);
			if (!g->right[c] && !last)
				pad(out, w[c] - n, ' ');
			if (!last)
				mp_out_puts(out, "  ");
		}
		while (out->sink == NULL && out->len > 0 && out->data[out->len - 1] == ' ')
			out->len--;
		mp_out_putc(out, '\n');
	}
	for (size_t c = 0; rst && g->nrows > 0 && c < g->ncols; c++) {
		pad(out, w[c], '=');
		mp_out_puts(out, c + 1 < g->ncols ? "  " : "\n");
	}
}

/* ---- sections */

static void heading(mp_out *out, bool rst, const char *title, char rule)
{
	mp_out_printf(out, "\n%s\n", title);
	if (rst) {
		pad(out, strlen(title), rule);
		mp_out_puts(out, "\n\n");
	}
}

static void put_fraction(mp_out *out, double part, double whole)
{
	mp_out_printf(out, "%.0f%%", whole > 0 ? 100.0 * part / whole : 0.0);
}

/* The cells of rank R's figures from column 1 on. */
static void rank_cells(struct grid *g, const fleet_rank *r, enum mp_units u)
{
	for (int m = 0; m < FLEET_METRICS; m++) {
		if (m == FLEET_BLOCKS) {
			mp_out_printf(&g->scratch, "%lld", (long long)r->metric[m]);
			grid_take(g, 7);
		} else {
			grid_size(g, 1 + m, (double)r->metric[m], u);
		}
	}
	grid_size(g, 5, (double)r->largest_free, u);
	put_fraction(&g->scratch, (double)(r->metric[FLEET_FREE] - r->largest_free), (double)r->metric[FLEET_FREE]);
	grid_take(g, 6);
}

/* The notes of rank R: an outlier's mark, its OOMs, why it was not read. */
static void rank_note(struct grid *g, const fleet_rank *r, bool outlier)
{
	if (outlier)
		mp_out_puts(&g->scratch, "outlier");
	if (r->nooms > 0)
		mp_out_printf(&g->scratch, "%s%u OOM%s", outlier ? "; " : "", r->nooms, r->nooms == 1 ? "" : "s");
	if (!r->read)
		mp_out_printf(&g->scratch, "%snot read: %s", outlier || r->nooms > 0 ? "; " : "",
			      r->error != NULL ? r->error : "?");
	grid_take(g, 8);
}

static bool is_outlier(const fleet_rank *r, const fleet_rank *const *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (out[i] == r)
			return true;
	return false;
}

/* Every rank's figures, then their median and MAD. */
static void ranks_table(const mp_fleet *f, const fleet_rank *const *outl, size_t nout, enum mp_units u, bool rst,
			mp_out *out)
{
	static const char *const head[] = { "rank", "reserved", "allocated", "active", "free", "largest free",
					    "frag", "blocks", "note" };
	struct grid g;

	grid_init(&g, 9);
	for (size_t c = 0; c < 8; c++)
		g.right[c] = true;
	if (grid_row(&g))
		for (size_t c = 0; c < 9; c++)
			grid_text(&g, c, head[c]);
	for (size_t i = 0; i < f->n && grid_row(&g); i++) {
		const fleet_rank *r = &f->ranks[i];

		mp_out_printf(&g.scratch, "%ld", r->rank);
		grid_take(&g, 0);
		if (r->read)
			rank_cells(&g, r, u);
		rank_note(&g, r, is_outlier(r, outl, nout));
	}
	for (int row = 0; row < 2 && grid_row(&g); row++) {
		grid_text(&g, 0, row == 0 ? "median" : "MAD");
		for (int m = 0; m < FLEET_METRICS; m++) {
			double v = row == 0 ? f->median[m] : f->mad[m];

			if (m == FLEET_BLOCKS) {
				mp_out_printf(&g.scratch, "%.0f", v);
				grid_take(&g, 7);
			} else {
				grid_size(&g, 1 + (size_t)m, v, u);
			}
		}
	}
	grid_print(&g, rst, out);
	if (g.scratch.err != MP_OK && out->err == MP_OK)
		out->err = g.scratch.err;
	grid_free(&g);
}

/* "rank 2 reserves 1.2GiB, median 800.0MiB (+56%)" for each figure of R that stands out. */
static void outlier_lines(const mp_fleet *f, const fleet_rank *r, enum mp_units u, bool rst, mp_out *out)
{
	for (int m = 0; m < FLEET_METRICS; m++) {
		double x = (double)r->metric[m], med = f->median[m];
		mp_out v;
		size_t len;
		char *text;

		if (fleet_deviation(f, r, (enum fleet_metric)m) <= 1)
			continue;
		mp_out_init(&v);
		if (m == FLEET_BLOCKS)
			mp_out_printf(&v, "%lld", (long long)r->metric[m]);
		else
			mp_format_size(&v, (mp_i128)x, u);
		text = mp_out_take(&v, &len);
		mp_out_printf(out, "%srank %ld ", rst ? "- " : "  ", r->rank);
		mp_out_printf(out, fleet_metric_verbs[m], text != NULL ? text : "?");
		free(text);
		mp_out_puts(out, ", median ");
		if (m == FLEET_BLOCKS)
			mp_out_printf(out, "%.0f", med);
		else
			mp_format_size(out, (mp_i128)(med + 0.5), u);
		if (med > 0)
			mp_out_printf(out, " (%+.0f%%)\n", 100.0 * (x - med) / med);
		else
			mp_out_puts(out, "\n");
		mp_out_free(&v);
	}
}

/* Rank R's largest differences from the median in table D, at most TOP rows. */
static void diff_table(const mp_fleet *f, const fleet_rank *r, enum fleet_dim d, const mp_fleet_report_opts *o,
		       mp_out *out)
{
	bool rst = o->format == MP_FLEET_RST;
	char title[96];
	fleet_diff *v;
	struct grid g;
	size_t n;

	if (fleet_diffs(f, r, d, o->top, &v, &n) != MP_OK) {
		out->err = MP_E_NOMEM;
		return;
	}
	snprintf(title, sizeof title, "rank %ld by %s, against the median over the ranks", r->rank,
		 d == FLEET_MODULE ? "module" : d == FLEET_SITE ? "call site" : "category");
	heading(out, rst, title, '~');
	if (n == 0) {
		mp_out_puts(out, rst ? "No difference.\n" : "  no difference\n");
		free(v);
		return;
	}
	grid_init(&g, 4);
	g.right[0] = g.right[1] = g.right[2] = true;
	if (grid_row(&g)) {
		grid_text(&g, 0, "difference");
		grid_text(&g, 1, "rank");
		grid_text(&g, 2, "median");
		grid_text(&g, 3, d == FLEET_MODULE ? "module (category)" : d == FLEET_SITE ? "call site" : "category");
	}
	for (size_t i = 0; i < n && grid_row(&g); i++) {
		fleet_put_delta(&g.scratch, (double)v[i].bytes - v[i].median, o->units);
		grid_take(&g, 0);
		grid_size(&g, 1, (double)v[i].bytes, o->units);
		grid_size(&g, 2, v[i].median, o->units);
		fleet_put_key(&g.scratch, f, d, v[i].key);
		grid_take(&g, 3);
	}
	grid_print(&g, rst, out);
	grid_free(&g);
	free(v);
}

/* The outliers: their figures against the median, the line that says why, their difference tables. */
static void outliers(const mp_fleet *f, const fleet_rank *const *v, size_t n, const mp_fleet_report_opts *o,
		     mp_out *out)
{
	bool rst = o->format == MP_FLEET_RST;

	heading(out, rst, "Outliers", '-');
	if (f->nread < 3) {
		mp_out_printf(out, "%sFewer than 3 ranks read: no majority to stand out from.\n", rst ? "" : "  ");
		return;
	}
	if (n == 0) {
		mp_out_printf(out, "%sNone: every rank lies within max(3.5 x 1.4826 x MAD, 1 MiB, 5%% of the median reserved) of "
				   "the median of each figure.\n", rst ? "" : "  ");
		return;
	}
	for (size_t i = 0; i < n; i++)
		outlier_lines(f, v[i], o->units, rst, out);
	heading(out, rst, "Why", '-');
	for (size_t i = 0; i < n; i++) {
		mp_out_puts(out, rst ? "- " : "  ");
		fleet_why(f, v[i], o->units, out);
		mp_out_putc(out, '\n');
	}
	for (size_t i = 0; i < n && i < o->top; i++) {
		diff_table(f, v[i], fleet_dim_informative(f, FLEET_MODULE) ? FLEET_MODULE : FLEET_CATEGORY, o, out);
		if (f->opts.frames)
			diff_table(f, v[i], FLEET_SITE, o, out);
	}
	if (n > o->top)
		mp_out_printf(out, "\n%s(the difference tables of the %zu most deviant ranks; --top N shows more)\n",
			      rst ? "" : "  ", o->top);
}

/* The bytes by category of every rank read, and their median. */
static void categories(const mp_fleet *f, const mp_fleet_report_opts *o, mp_out *out)
{
	bool rst = o->format == MP_FLEET_RST;
	uint32_t *cols;
	size_t ncols;
	struct grid g;

	heading(out, rst, "Bytes by category", '-');
	if (fleet_category_order(f, &cols, &ncols) != MP_OK) {
		out->err = MP_E_NOMEM;
		return;
	}
	if (ncols > 15)
		ncols = 15; /* the rest are in the JSON */
	grid_init(&g, ncols + 1);
	for (size_t c = 0; c <= ncols; c++)
		g.right[c] = true;
	if (grid_row(&g)) {
		grid_text(&g, 0, "rank");
		for (size_t c = 0; c < ncols; c++)
			grid_text(&g, c + 1, f->keys[FLEET_CATEGORY].text[cols[c]]);
	}
	for (size_t i = 0; i < f->n; i++) {
		if (!f->ranks[i].read || !grid_row(&g))
			continue;
		mp_out_printf(&g.scratch, "%ld", f->ranks[i].rank);
		grid_take(&g, 0);
		for (size_t c = 0; c < ncols; c++)
			grid_size(&g, c + 1, (double)fleet_cell_bytes(&f->ranks[i], FLEET_CATEGORY, cols[c]), o->units);
	}
	if (grid_row(&g)) {
		grid_text(&g, 0, "median");
		for (size_t c = 0; c < ncols; c++)
			grid_size(&g, c + 1, f->key_median[FLEET_CATEGORY][cols[c]], o->units);
	}
	grid_print(&g, rst, out);
	grid_free(&g);
	free(cols);
}

/* What each rank that ran out of memory left. */
static void ooms(const mp_fleet *f, bool rst, mp_out *out)
{
	bool any = false;

	for (size_t i = 0; i < f->n; i++) {
		const fleet_rank *r = &f->ranks[i];

		if (r->oom_path == NULL)
			continue;
		if (!any)
			heading(out, rst, "Out of memory", '-');
		any = true;
		mp_out_printf(out, "%srank %ld ran out of memory (%u OOM%s; the first: %s)\n", rst ? "- " : "  ", r->rank,
			      r->nooms, r->nooms == 1 ? "" : "s", r->oom_path);
		for (const char *p = r->oom != NULL ? r->oom : "(not read)\n"; *p != '\0';) {
			size_t n = strcspn(p, "\n");

			mp_out_printf(out, "%s%.*s\n", rst ? "    " : "      ", (int)n, p);
			p += n + (p[n] == '\n');
		}
	}
}

static void plain(const mp_fleet *f, const mp_fleet_report_opts *o, mp_out *out)
{
	bool rst = o->format == MP_FLEET_RST;
	const fleet_rank **v;
	size_t n;

	if (fleet_outliers(f, &v, &n) != MP_OK) {
		out->err = MP_E_NOMEM;
		return;
	}
	if (rst)
		mp_out_puts(out, "Fleet\n=====\n\n");
	mp_out_printf(out, "%zu ranks, %zu read; device ", f->n, f->nread);
	if (f->opts.device < 0)
		mp_out_puts(out, "all");
	else
		mp_out_printf(out, "%lld", (long long)f->opts.device);
	mp_out_printf(out, "; modules %d name%s below their root; %s\n", f->opts.depth, f->opts.depth == 1 ? "" : "s",
		      f->opts.frames ? "call sites from the frames" : "frames not read (no call sites)");
	heading(out, rst, "Ranks", '-');
	ranks_table(f, v, n, o->units, rst, out);
	outliers(f, v, n, o, out);
	categories(f, o, out);
	ooms(f, rst, out);
	free(v);
}

mp_err mp_fleet_report(const mp_fleet *f, const mp_fleet_report_opts *o, mp_out *out)
{
	switch (o->format) {
	case MP_FLEET_JSON:
		fleet_report_json(f, o, out);
		break;
	case MP_FLEET_HTML:
		fleet_report_html(f, o, out);
		break;
	default:
		plain(f, o, out);
		break;
	}
	return out->err;
}
