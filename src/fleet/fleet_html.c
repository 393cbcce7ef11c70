/* fleet_html.c - the fleet's report as one self-contained HTML page (no script, nothing fetched): the outliers
   and why, each outlier's differences from the median rank, a heat map of ranks by figure and category (each
   cell shaded by how far it lies from its column's median, outlined where it stands out), and the OOMs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_int.h"

/* S (N bytes) with HTML's special characters written as entities, control characters but newlines as '?'. */
static void put_esc_n(mp_out *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': mp_out_puts(out, "&amp;"); break;
		case '<': mp_out_puts(out, "&lt;"); break;
		case '>': mp_out_puts(out, "&gt;"); break;
		case '"': mp_out_puts(out, "&quot;"); break;
		case '\'': mp_out_puts(out, "&#39;"); break;
		default: mp_out_putc(out, (unsigned char)s[i] < 0x20 && s[i] != '\n' ? '?' : s[i]); break;
		}
	}
}

static void put_esc(mp_out *out, const char *s)
{
	put_esc_n(out, s, strlen(s));
}

/* What OUT's scratch text W holds, escaped into OUT; W emptied. */
static void flush_esc(mp_out *out, mp_out *w)
{
	put_esc_n(out, w->data != NULL ? w->data : "", w->len);
	if (w->err != MP_OK && out->err == MP_OK)
		out->err = w->err;
	w->len = 0;
}

static const char style[] =
	"body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
	"table{border-collapse:collapse;margin:.5em 0 1.5em}"
	"td,th{padding:2px 8px;border:1px solid #ddd;text-align:right;white-space:nowrap}"
	"th{background:#f4f4f4}td.key,th.key{text-align:left}"
	"tr.outlier td:first-child{background:#e04040;color:#fff;font-weight:bold}"
	"tr.median td{font-style:italic;border-top:2px solid #888}"
	"td.out{outline:2px solid #600;outline-offset:-2px;font-weight:bold}"
	"li{margin:.2em 0}pre{background:#f8f8f8;padding:.5em}";

/* One column of the heat map: a figure (M < FLEET_METRICS) or a category key. */
struct column {
	const char *name;
	int metric;    /* -1: a category */
	uint32_t key;
	double max, median, threshold;
};

static double column_value(const struct column *c, const fleet_rank *r)
{
	return c->metric >= 0 ? (double)r->metric[c->metric] : (double)fleet_cell_bytes(r, FLEET_CATEGORY, c->key);
}

/* C's largest value, median and outlier threshold over F's ranks read (V: room for them). */
static void column_stats(const mp_fleet *f, struct column *c, double *v)
{
	size_t n = 0;

	c->max = 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->ranks[i].read) {
			v[n] = column_value(c, &f->ranks[i]);
			if (v[n] > c->max)
				c->max = v[n];
			n++;
		}
	c->median = mp_fleet_median(v, n);
	c->threshold = mp_fleet_threshold(c->median, mp_fleet_mad(v, n, c->median), c->metric == FLEET_BLOCKS ? 16 : 1048576);
}

/* A cell of the heat map: white at its column's median, redder above it and bluer below it (by the difference
   relative to the median), outlined where it stands out. */
static void heat_cell(mp_out *out, mp_out *w, const struct column *c, double x, enum mp_units u, bool median)
{
	double rel = (x - c->median) / (c->median > 0 ? c->median : c->max > 0 ? c->max : 1);
	bool stands_out = !median && fabs(x - c->median) > c->threshold;

	if (rel > 1)
		rel = 1;
	if (rel < -1)
		rel = -1;
	mp_out_printf(out, "<td%s style=\"background:hsl(%d,75%%,%.0f%%)\">", stands_out ? " class=\"out\"" : "",
		      rel >= 0 ? 0 : 215, 100 - 45 * fabs(rel));
	if (c->metric == FLEET_BLOCKS)
		mp_out_printf(w, "%.0f", x);
	else
		mp_format_size(w, (mp_i128)(x + 0.5), u);
	flush_esc(out, w);
	mp_out_puts(out, "</td>");
}

static bool listed(const fleet_rank *r, const fleet_rank *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == r)
			return true;
	return false;
}

/* The heat map: a row per rank read (the outliers marked), the figures then the categories, the median last. */
static void heat_map(const mp_fleet *f, const fleet_rank *const *outl, size_t nout, enum mp_units u, mp_out *out,
		     mp_out *w)
{
	uint32_t *cats;
	size_t ncats, ncols;
	struct column *cols;
	double *v = malloc((f->n > 0 ? f->n : 1) * sizeof *v);

	if (v == NULL || fleet_category_order(f, &cats, &ncats) != MP_OK) {
		free(v);
		out->err = MP_E_NOMEM;
		return;
	}
	ncols = FLEET_METRICS + ncats;
	if ((cols = calloc(ncols, sizeof *cols)) == NULL) {
		free(v), free(cats);
		out->err = MP_E_NOMEM;
		return;
	}
	for (size_t c = 0; c < ncols; c++) {
		cols[c].metric = c < FLEET_METRICS ? (int)c : -1;
		cols[c].key = c < FLEET_METRICS ? 0 : cats[c - FLEET_METRICS];
		cols[c].name = c < FLEET_METRICS ? fleet_metric_names[c] : f->keys[FLEET_CATEGORY].text[cols[c].key];
		column_stats(f, &cols[c], v);
	}
	mp_out_puts(out, "<table class=\"heat\"><tr><th>rank</th>");
	for (size_t c = 0; c < ncols; c++) {
		mp_out_puts(out, "<th>");
		put_esc(out, cols[c].name);
		mp_out_puts(out, "</th>");
	}
	mp_out_puts(out, "</tr>\n");
	for (size_t i = 0; i < f->n; i++) {
		const fleet_rank *r = &f->ranks[i];

		if (!r->read)
			continue;
		mp_out_printf(out, "<tr%s><td>%ld</td>", listed(r, outl, nout) ? " class=\"outlier\"" : "", r->rank);
		for (size_t c = 0; c < ncols; c++)
			heat_cell(out, w, &cols[c], column_value(&cols[c], r), u, false);
		mp_out_puts(out, "</tr>\n");
	}
	mp_out_puts(out, "<tr class=\"median\"><td>median</td>");
	for (size_t c = 0; c < ncols; c++)
		heat_cell(out, w, &cols[c], cols[c].median, u, true);
	mp_out_puts(out, "</tr></table>\n");
	free(cols), free(cats), free(v);
}

/* Rank R's differences from the median in table D. */
static void diff_table(const mp_fleet *f, const fleet_rank *r, enum fleet_dim d, const mp_fleet_report_opts *o,
		       mp_out *out, mp_out *w)
{
	fleet_diff *v;
	size_t n;

	if (fleet_diffs(f, r, d, o->top, &v, &n) != MP_OK) {
		out->err = MP_E_NOMEM;
		return;
	}
	mp_out_printf(out, "<h3>rank %ld by %s, against the median over the ranks</h3>\n", r->rank,
		      d == FLEET_MODULE ? "module" : d == FLEET_SITE ? "call site" : "category");
	mp_out_printf(out, "<table><tr><th>difference</th><th>rank</th><th>median</th><th class=\"key\">%s</th></tr>\n",
		      d == FLEET_MODULE ? "module (category)" : d == FLEET_SITE ? "call site" : "category");
	for (size_t i = 0; i < n; i++) {
		mp_out_puts(out, "<tr><td>");
		fleet_put_delta(w, (double)v[i].bytes - v[i].median, o->units);
		flush_esc(out, w);
		mp_out_puts(out, "</td><td>");
		mp_format_size(w, v[i].bytes, o->units);
		flush_esc(out, w);
		mp_out_puts(out, "</td><td>");
		mp_format_size(w, (mp_i128)(v[i].median + 0.5), o->units);
		flush_esc(out, w);
		mp_out_puts(out, "</td><td class=\"key\">");
		fleet_put_key(w, f, d, v[i].key);
		flush_esc(out, w);
		mp_out_puts(out, "</td></tr>\n");
	}
	mp_out_puts(out, "</table>\n");
	free(v);
}

/* The outliers, why, and their difference tables. */
static void outliers(const mp_fleet *f, const fleet_rank *const *v, size_t n, const mp_fleet_report_opts *o,
		     mp_out *out, mp_out *w)
{
	mp_out_puts(out, "<h2>Outliers</h2>\n");
	if (n == 0) {
		mp_out_puts(out, f->nread < 3 ? "<p>Fewer than 3 ranks read: no majority to stand out from.</p>\n"
					      : "<p>None: every rank lies within max(3.5 &times; 1.4826 &times; MAD, 1 MiB, "
						"5% of the median reserved) of the median of each figure.</p>\n");
		return;
	}
	mp_out_puts(out, "<ul>\n");
	for (size_t i = 0; i < n; i++) {
		mp_out_puts(out, "<li>");
		fleet_why(f, v[i], o->units, w);
		flush_esc(out, w);
		mp_out_puts(out, "</li>\n");
	}
	mp_out_puts(out, "</ul>\n");
	for (size_t i = 0; i < n && i < o->top; i++) {
		diff_table(f, v[i], fleet_dim_informative(f, FLEET_MODULE) ? FLEET_MODULE : FLEET_CATEGORY, o, out, w);
		if (f->opts.frames)
			diff_table(f, v[i], FLEET_SITE, o, out, w);
	}
}

static void ooms(const mp_fleet *f, mp_out *out)
{
	bool any = false;

	for (size_t i = 0; i < f->n; i++) {
		const fleet_rank *r = &f->ranks[i];

		if (r->oom_path == NULL)
			continue;
		if (!any)
			mp_out_puts(out, "<h2>Out of memory</h2>\n");
		any = true;
		mp_out_printf(out, "<h3>rank %ld: %u OOM%s, the first in ", r->rank, r->nooms, r->nooms == 1 ? "" : "s");
		put_esc(out, r->oom_path);
		mp_out_puts(out, "</h3>\n<pre>");
		put_esc(out, r->oom != NULL ? r->oom : "(not read)");
		mp_out_puts(out, "</pre>\n");
	}
}

/* The ranks that could not be read, and why. */
static void unread(const mp_fleet *f, mp_out *out)
{
	if (f->nread == f->n)
		return;
	mp_out_puts(out, "<h2>Ranks not read</h2>\n<ul>\n");
	for (size_t i = 0; i < f->n; i++)
		if (!f->ranks[i].read) {
			mp_out_printf(out, "<li>rank %ld: ", f->ranks[i].rank);
			put_esc(out, f->ranks[i].error != NULL ? f->ranks[i].error : "?");
			mp_out_puts(out, "</li>\n");
		}
	mp_out_puts(out, "</ul>\n");
}

void fleet_report_html(const mp_fleet *f, const mp_fleet_report_opts *o, mp_out *out)
{
	const fleet_rank **v;
	size_t n;
	mp_out w;

	if (fleet_outliers(f, &v, &n) != MP_OK) {
		out->err = MP_E_NOMEM;
		return;
	}
	mp_out_init(&w);
	mp_out_printf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			   "<title>memprof fleet: %zu ranks</title>\n<style>%s</style></head><body>\n",
		      f->n, style);
	mp_out_printf(out, "<h1>memprof fleet</h1>\n<p>%zu ranks, %zu read; device ", f->n, f->nread);
	if (f->opts.device < 0)
		mp_out_puts(out, "all");
	else
		mp_out_printf(out, "%lld", (long long)f->opts.device);
	mp_out_printf(out, "; modules %d name%s below their root; %s.</p>\n", f->opts.depth, f->opts.depth == 1 ? "" : "s",
		      f->opts.frames ? "call sites from the frames" : "frames not read (no call sites)");
	outliers(f, v, n, o, out, &w);
	mp_out_puts(out, "<h2>Ranks by figure and category</h2>\n<p>Each cell shaded by how far it lies from its "
			 "column's median: white at the median, red above, blue below; outlined where it stands out "
			 "(further than max(3.5 &times; 1.4826 &times; MAD, 1 MiB, 5% of the median reserved)).</p>\n");
	heat_map(f, v, n, o->units, out, &w);
	ooms(f, out);
	unread(f, out);
	mp_out_puts(out, "</body></html>\n");
	mp_out_free(&w);
	free(v);
}
